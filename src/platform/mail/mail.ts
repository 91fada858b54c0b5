import { Kind, type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Db } from '../db/database.js';
import type { Tx } from '../db/transaction.js';
import { defineJob } from '../jobs/define-job.js';
import { PermanentJobError } from '../jobs/runner.js';
import type { LinkTokenKind, LinkTokens } from './link-tokens.js';


export interface RenderedEmail {
  to: string;
  subject: string;
  text: string;
  /** The HTML part beside the text (written with `composeEmail`); the transports send both as multipart/alternative. */
  html?: string;
}

/** An e-mail that no longer applies when its turn comes (its link was used, its invitation revoked): nothing is sent. */
export interface SkippedEmail {
  skip: string;
}

/** What a render function may use: the database (to read what the references point at), link tokens and the public addresses. */
export interface EmailContext {
  db: Db;
  /** The workspace the e-mail was queued for; null for service-wide e-mail (sign-in links, partner notices). */
  workspaceId: number | null;
  tokens: LinkTokens;
  urls: { publicBaseUrl: string; portalUrl: string };
}

/**
 * One kind of e-mail, declared once: its name, the schema of what its job carries (references —
 * ids and enums — never a secret and never free text) and how it becomes a subject and a
 * text when the job runs. Anything secret (a link's token, a serial code) is read or derived at
 * render time, so the queue holds nothing usable.
 */
export interface EmailKind<S extends TObject = TObject> {
  readonly name: string;
  readonly payload: S;
  render(payload: Static<S>, ctx: EmailContext): Promise<RenderedEmail | SkippedEmail>;
}

/**
 * The job that renders and sends one e-mail: the kind's name and its references (checked against the
 * kind's own schema when it renders). The second shape is an e-mail queued already written, before
 * migration 0019, which is sent as it was. A finished e-mail job keeps its kind and outcome, not its payload.
 */
export const EmailJob = defineJob(
  'email.send',
  Type.Union([
    Type.Object({ kind: Type.String(), ref: Type.Object({}) }, { additionalProperties: false }),
    Type.Object({ to: Type.String(), subject: Type.String(), text: Type.String(), kind: Type.Optional(Type.String()) }),
  ]),
  // A slow mail server holds nothing but this lease.
  { leaseSeconds: 300, purgePayload: true },
);

const catalogue = new Map<string, EmailKind>();

/** Declares an e-mail kind (once per name); refuses a payload schema that could carry text. */
export function defineEmail<S extends TObject>(kind: EmailKind<S>): EmailKind<S> {
  if (catalogue.has(kind.name)) throw new Error(`The e-mail kind "${kind.name}" is defined twice`);
  const free = freeTextIn(kind.payload, 'payload');
  if (free) throw new Error(`The e-mail kind "${kind.name}" may carry free text at ${free}: queue references (ids, enums) and read the rest when rendering`);
  catalogue.set(kind.name, kind as unknown as EmailKind);
  return kind;
}

export const findEmailKind = (name: string): EmailKind | undefined => catalogue.get(name);
export const emailKinds = (): EmailKind[] => [...catalogue.values()];

/**
 * Queues e-mail in the caller's transaction, as jobs: an e-mail exists only if the change that
 * causes it commits, and it is rendered and sent after the commit, outside any transaction (at
 * least once: a sender that dies mid-send leaves it to be sent again).
 */
export async function enqueueEmails<S extends TObject>(tx: Tx, owner: { workspaceId: number } | null, kind: EmailKind<S>, refs: Array<Static<S>>): Promise<number[]> {
  if (findEmailKind(kind.name) !== kind) throw new Error(`The e-mail kind "${kind.name}" was not declared with defineEmail`);
  for (const ref of refs) {
    if (!Value.Check(kind.payload, ref)) throw new Error(`A "${kind.name}" e-mail was queued with references that do not match its schema`);
  }
  return EmailJob.enqueueMany(
    tx,
    refs.map((ref) => ({ kind: kind.name, ref })),
    { workspaceId: owner?.workspaceId ?? null },
  );
}

export const enqueueEmail = async <S extends TObject>(tx: Tx, owner: { workspaceId: number } | null, kind: EmailKind<S>, ref: Static<S>): Promise<number> =>
  (await enqueueEmails(tx, owner, kind, [ref]))[0]!;

/** What a link's row keeps of its token (null nonce: made before tokens were derived). */
export interface StoredLinkToken {
  token_nonce: string | null;
  token_hash: string;
  expires_at: Date;
  used_at?: Date | null;
}

/**
 * For render functions of e-mails that carry a link: its token derived again from the row, or why
 * the e-mail no longer applies (the link is gone, used or expired). A token that cannot be derived
 * (the encryption key changed) fails the job: nothing is sent, and the person asks again.
 */
export function linkTokenForEmail<L extends StoredLinkToken>(ctx: EmailContext, kind: LinkTokenKind, link: L | undefined, what = 'link'): { token: string; link: L } | SkippedEmail {
  if (!link) return { skip: `the ${what} is gone` };
  if ((link.used_at ?? null) !== null || link.expires_at <= new Date()) return { skip: `the ${what} was used or has expired` };
  const token = link.token_nonce === null ? null : ctx.tokens.rederive(kind, { nonce: link.token_nonce, hash: link.token_hash });
  if (!token) throw new PermanentJobError(`the ${what}’s token cannot be derived again (the encryption key changed); a new one must be asked for`);
  return { token, link };
}

// Numbers, booleans and literals are references or facts; a free string could be a token or a
// whole text, which is exactly what the queue must not hold.
function freeTextIn(schema: TSchema, path: string): string | null {
  switch (schema[Kind]) {
    case 'Integer':
    case 'Number':
    case 'Boolean':
    case 'Null':
    case 'Literal':
      return null;
    case 'String':
      return typeof schema.const === 'string' || Array.isArray(schema.enum) ? null : path;
    case 'Union':
      for (const member of schema.anyOf as TSchema[]) {
        const found = freeTextIn(member, path);
        if (found) return found;
      }
      return null;
    case 'Array':
      return freeTextIn(schema.items as TSchema, `${path}[]`);
    case 'Object':
      for (const [name, property] of Object.entries(schema.properties as Record<string, TSchema>)) {
        const found = freeTextIn(property, `${path}.${name}`);
        if (found) return found;
      }
      return schema.additionalProperties === false ? null : `${path} (close it with additionalProperties: false)`;
    default:
      return `${path} (${String(schema[Kind])})`;
  }
}
