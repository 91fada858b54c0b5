import escapeHtml from 'escape-html';
import type { RenderedEmail } from './mail.js';

// MJML and its dependencies take about two seconds to load: only a process that sends e-mail pays
// for it, once, when the first e-mail is rendered (not the CLI, not start-up).
let mjml: Promise<typeof import('mjml')> | undefined;

/**
 * What an e-mail says, once: `composeEmail` writes it as the text part and, through MJML, as the
 * HTML part, so the two never drift apart. Every value is text; the HTML escapes it.
 */
export interface EmailContent {
  to: string;
  subject: string;
  /** Who the reader knows the e-mail is from (a workspace's name): shown above the heading. */
  brand: string;
  /** The line mail clients show beside the subject. */
  preview: string;
  heading: string;
  paragraphs: string[];
  /** Values the reader copies exactly (license keys), each with its label. */
  details?: Array<{ label: string; value: string }>;
  /** The one thing to do (open the portal, sign in), as a button and as a line of text. */
  action?: { label: string; url: string };
  /** Small print below the rest. */
  footer?: string[];
}

function textPart(c: EmailContent): string {
  const blocks = [c.heading, ...c.paragraphs];
  if (c.details?.length) blocks.push(c.details.map((d) => `${d.label}: ${d.value}`).join('\n'));
  if (c.action) blocks.push(`${c.action.label}:\n${c.action.url}`);
  if (c.footer?.length) blocks.push(`--\n${c.footer.join('\n')}`);
  return blocks.join('\n\n');
}

const FONT = 'Helvetica, Arial, sans-serif';

// MJML (https://mjml.io) turns this markup into the table layout, inlined styles and Outlook
// conditionals that mail clients need; we never write that HTML by hand.
function markup(c: EmailContent): string {
  const e = (value: string) => escapeHtml(value);
  const paragraphs = c.paragraphs.map((p) => `<mj-text>${e(p)}</mj-text>`).join('');
  const details = (c.details ?? [])
    .map((d) => `<mj-text padding-bottom="0" color="#52525b" font-size="13px">${e(d.label)}</mj-text><mj-text font-family="Menlo, Consolas, monospace" font-size="16px" padding-top="4px">${e(d.value)}</mj-text>`)
    .join('');
  const action = c.action ? `<mj-button href="${e(c.action.url)}" background-color="#18181b" border-radius="6px" align="left">${e(c.action.label)}</mj-button>` : '';
  const footer = (c.footer ?? []).map((line) => `<mj-text color="#71717a" font-size="12px" padding-top="0">${e(line)}</mj-text>`).join('');
  return `<mjml lang="en">
  <mj-head>
    <mj-title>${e(c.subject)}</mj-title>
    <mj-preview>${e(c.preview)}</mj-preview>
    <mj-attributes><mj-all font-family="${FONT}" /><mj-text font-size="15px" line-height="1.5" color="#18181b" /></mj-attributes>
  </mj-head>
  <mj-body background-color="#f4f4f5">
    <mj-section padding-bottom="0"><mj-column><mj-text font-size="13px" color="#52525b" font-weight="bold">${e(c.brand)}</mj-text></mj-column></mj-section>
    <mj-section background-color="#ffffff" border-radius="8px">
      <mj-column>
        <mj-text font-size="20px" font-weight="bold">${e(c.heading)}</mj-text>
        ${paragraphs}${details}${action}
      </mj-column>
    </mj-section>
    <mj-section><mj-column>${footer}</mj-column></mj-section>
  </mj-body>
</mjml>`;
}

/** The shape of an e-mail: what decides its MJML layout, whatever the values say. */
const shapeOf = (c: EmailContent) => `${c.paragraphs.length}:${c.details?.length ?? 0}:${c.action ? 1 : 0}:${c.footer?.length ?? 0}`;

/** The text values of an e-mail in a fixed order, matching the slots of its shape's layout. */
function valuesOf(c: EmailContent): string[] {
  return [
    c.subject,
    c.preview,
    c.brand,
    c.heading,
    ...c.paragraphs,
    ...(c.details ?? []).flatMap((d) => [d.label, d.value]),
    ...(c.action ? [c.action.url, c.action.label] : []),
    ...(c.footer ?? []),
  ];
}

// A slot's marker in the layout: letters and digits only, so MJML passes it through as it would any
// word, and `z` after the digits, so slot 1 is never a prefix of slot 10.
const slot = (n: number) => `pbslot${n}z`;
const SLOTS = /pbslot(\d+)z/g;

/** MJML's HTML per shape, with a marker where each value goes (MJML runs once per shape and process, not per e-mail). */
const layouts = new Map<string, Promise<string>>();

async function renderLayout(c: EmailContent): Promise<string> {
  const { default: mjml2html } = await (mjml ??= import('mjml'));
  let n = 0;
  const next = () => slot(n++);
  const blank: EmailContent = {
    to: c.to,
    subject: next(),
    preview: next(),
    brand: next(),
    heading: next(),
    paragraphs: c.paragraphs.map(next),
    ...(c.details ? { details: c.details.map(() => ({ label: next(), value: next() })) } : {}),
    ...(c.action ? { action: { url: next(), label: next() } } : {}),
    ...(c.footer ? { footer: c.footer.map(next) } : {}),
  };
  const { html, errors } = await mjml2html(markup(blank), { validationLevel: 'strict' });
  // Strict validation fails on a template mistake, which no retry fixes: let the job fail loudly.
  if (errors.length > 0) throw new Error(`E-mail template: ${errors.map((error) => error.formattedMessage).join('; ')}`);
  return html;
}

export async function composeEmail(content: EmailContent): Promise<RenderedEmail & { html: string }> {
  const shape = shapeOf(content);
  let layout = layouts.get(shape);
  if (!layout) {
    layout = renderLayout(content);
    layouts.set(shape, layout);
    layout.catch(() => layouts.delete(shape));
  }
  const values = valuesOf(content);
  const url = content.action ? values.length - (content.footer?.length ?? 0) - 2 : -1;
  // MJML trims the text of its elements and leaves out an element (or attribute) whose value is empty: an e-mail
  // with an empty value is rare and rendered on its own; every other value goes into the layout trimmed (the URL as
  // it is) and escaped exactly as `markup` escapes it before MJML, which passes it through.
  if (values.some((v, i) => (i === url ? v : v.trim()) === '')) {
    return { to: content.to, subject: content.subject, text: textPart(content), html: await composeEmailDirect(content) };
  }
  const filled = values.map((v, i) => escapeHtml(i === url ? v : v.trim()));
  const html = (await layout).replace(SLOTS, (_, i: string) => filled[Number(i)]!);
  return { to: content.to, subject: content.subject, text: textPart(content), html };
}

/** MJML run on this e-mail itself, as every e-mail was before the layouts were kept (the tests hold both to one answer). */
export async function composeEmailDirect(content: EmailContent): Promise<string> {
  const { default: mjml2html } = await (mjml ??= import('mjml'));
  const { html, errors } = await mjml2html(markup(content), { validationLevel: 'strict' });
  if (errors.length > 0) throw new Error(`E-mail template: ${errors.map((error) => error.formattedMessage).join('; ')}`);
  return html;
}
