import type { FastifyInstance } from 'fastify';
import { ROW_ERROR_CODES } from '../import/errors.js';
import { errorCatalogue, type ErrorCode } from './errors.js';

/**
 * Where a problem's `type` points: this service's own page of the error catalogue, one anchor per
 * code (`PUBLIC_BASE_URL/docs/errors#VALIDATION_FAILED`). The page is rendered from the same
 * catalogue as docs/errors.md, so every deployment's `type` URLs resolve, offline and in step with
 * its version. The path and the anchors are stable API; clients still branch on `code`.
 */
export const ERROR_DOCS_PATH = '/docs/errors';
export const DEFAULT_PROBLEM_TYPE_BASE = 'http://127.0.0.1:3000';

export const problemType = (publicBaseUrl: string, code: string) => `${publicBaseUrl.replace(/\/$/, '')}${ERROR_DOCS_PATH}#${code}`;

export interface ErrorEntry {
  code: ErrorCode;
  status: number;
  title: string;
  meaning: string;
}

/** Every code of the loaded modules, by status then code (import every module first: app.ts does). */
export function errorEntries(): ErrorEntry[] {
  return [...errorCatalogue()]
    .map(([code, spec]) => ({ code, status: spec.status, title: spec.title, meaning: spec.description ?? spec.title }))
    .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code));
}

export const rowErrorEntries = () => Object.entries(ROW_ERROR_CODES).map(([code, meaning]) => ({ code, meaning }));

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** The catalogue's texts use Markdown code spans only. */
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

export function renderErrorPage(): string {
  const rows = errorEntries()
    .map((e) => `<tr id="${e.code}"><td><a href="#${e.code}"><code>${e.code}</code></a></td><td>${e.status}</td><td>${inline(e.meaning)}</td></tr>`)
    .join('\n');
  const rowErrors = rowErrorEntries()
    .map((e) => `<tr id="row-${e.code}"><td><code>${e.code}</code></td><td>${inline(e.meaning)}</td></tr>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Patchbay error codes</title>
<style>body{font:15px/1.45 system-ui,sans-serif;margin:2rem;max-width:70rem}td,th{padding:.3rem .6rem;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}:target{background:#fff3b0}</style>
</head><body>
<h1>Error codes</h1>
<p>Every error is <code>application/problem+json</code> with a stable <code>code</code>; its <code>type</code> links to the code's row here.
Branch on <code>code</code>, and quote the <code>requestId</code> when reporting a 5xx.</p>
<table><thead><tr><th>code</th><th>status</th><th>meaning</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2 id="row-errors">Import row errors</h2>
<p>In <code>errors[].code</code> of 207 and 422 import answers and of finished import resources.</p>
<table><thead><tr><th>code</th><th>meaning</th></tr></thead><tbody>
${rowErrors}
</tbody></table>
</body></html>
`;
}

/** `GET /docs/errors`: public like the API reference beside it, and not an API operation. */
export function registerErrorDocs(app: FastifyInstance): void {
  const page = renderErrorPage();
  app.get(ERROR_DOCS_PATH, { schema: { hide: true }, config: { policy: { auth: 'public' } } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
      .header('cache-control', 'public, max-age=3600')
      .send(page),
  );
}
