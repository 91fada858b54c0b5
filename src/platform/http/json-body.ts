import { isUtf8 } from 'node:buffer';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parseChunked } from '@discoveryjs/json-ext';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, CommonErrors, type FieldError } from './errors.js';
import { firstInvalidUtf8Offset } from './utf8.js';
import { findText, markTextChecked, runNow, runYielding, textProblem, TextErrors } from './text-hygiene.js';

/** Bodies from this size on are parsed in slices, letting other requests run between them. */
export const CHUNKED_PARSE_BYTES = 256 * 1024;
// About a millisecond of parsing per slice on a quiet machine.
const SLICE_BYTES = 64 * 1024;

// The keys Fastify's default parser (secure-json-parse) refuses, with its patterns; a body that may
// hold them takes that parser, since the chunked one assembles objects by assignment.
const SUSPECT_PROTO = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
const SUSPECT_CONSTRUCTOR =
  /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;
// In valid UTF-8 JSON, NUL and lone surrogates can only arrive as escapes (raw control characters
// are not JSON, raw surrogates are not UTF-8). Without one, the text-hygiene walk is skipped.
const NUL_OR_SURROGATE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;

/**
 * `application/json` bodies: refused with 400 INVALID_UTF8 when they are not UTF-8 (Fastify's own
 * parser would decode them with U+FFFD in place of the bad bytes), and parsed without holding the
 * event loop when they are large (imports of up to 32 MiB): in slices, with other requests served
 * in between, and with the NUL and surrogate check done in the same way.
 */
/** Each JSON request's body as it came, for a route that keeps it (a queued import stores its upload). */
const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/** The bytes of this request's JSON body, as parsed (undefined for other content types). */
export const rawJsonBody = (request: FastifyRequest): Buffer | undefined => rawBodies.get(request);

export function registerJsonBodyParser(app: FastifyInstance): void {
  const standard = app.getDefaultJsonParser('error', 'error');
  const parseSmall = (request: FastifyRequest, text: string) =>
    new Promise<unknown>((resolve, reject) => standard(request, text, (error, value) => (error ? reject(error) : resolve(value))));

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => {
    if (!isUtf8(body)) throw invalidUtf8(body);
    rawBodies.set(request, body);
    const large = body.length >= CHUNKED_PARSE_BYTES ? await parseInSlices(body) : null;
    if (large && !large.suspect) {
      if (large.escapes) {
        const found = await runYielding(findText(large.value, 'body', textProblem));
        if (found) throw new AppError(CommonErrors.INVALID_TEXT, `${found.path} ${found.message}`, { errors: [found] });
      }
      markTextChecked(large.value);
      return large.value;
    }
    // Small bodies, and (rarely) large ones that may hold a prototype key: Fastify's own parser.
    const text = body.toString('utf8');
    const value = await parseSmall(request, text);
    if (!NUL_OR_SURROGATE_ESCAPE.test(text)) markTextChecked(value);
    return value;
  });
}

/**
 * Parses large JSON a slice at a time (bytes already known to be UTF-8, or text). Each slice is
 * also scanned for prototype keys (then the parse stops: `suspect`) and for NUL or surrogate
 * escapes (`escapes`: the text-hygiene walk must run); the scan keeps the end of the previous
 * slice, so a key split across two slices is still seen.
 */
export async function parseInSlices(json: Buffer | string): Promise<{ value: unknown; suspect: boolean; escapes: boolean }> {
  const decoder = new TextDecoder('utf-8');
  let suspect = false;
  let escapes = false;
  let carry = '';
  async function* slices(): AsyncGenerator<string> {
    for (let offset = 0; offset < json.length; offset += SLICE_BYTES) {
      const slice =
        typeof json === 'string'
          ? json.slice(offset, offset + SLICE_BYTES)
          : decoder.decode(json.subarray(offset, offset + SLICE_BYTES), { stream: offset + SLICE_BYTES < json.length });
      const window = carry + slice;
      if (SUSPECT_PROTO.test(window) || SUSPECT_CONSTRUCTOR.test(window)) {
        suspect = true;
        return;
      }
      escapes ||= NUL_OR_SURROGATE_ESCAPE.test(window);
      // A match ending in the next slice starts at most a key's length (56 characters when fully
      // escaped) before the whitespace it may be followed by; a run of whitespace matches \s*
      // whatever its length, so one space stands for it.
      const kept = window.trimEnd();
      carry = kept.slice(-64) + (kept.length < window.length ? ' ' : '');
      yield slice;
      await nextTurn();
    }
  }
  try {
    const value: unknown = await parseChunked(slices);
    return { value, suspect, escapes };
  } catch {
    if (suspect) return { value: undefined, suspect, escapes };
    throw new AppError(CommonErrors.MALFORMED_JSON, 'Request body is not valid JSON');
  }
}

/**
 * JSON.parse(text) without holding the event loop for long text: in slices, unless the text may
 * hold a prototype key, which only JSON.parse itself keeps as plain data.
 */
export async function parseJsonYielding(text: string | Buffer): Promise<unknown> {
  const parsed = await parseInSlices(text);
  if (!parsed.suspect) return parsed.value;
  // A body that may hold a prototype key: Fastify's own parser refused it on arrival, so this is stored text only.
  return JSON.parse(typeof text === 'string' ? text : text.toString('utf8'));
}

/**
 * The 400 for a body that is not UTF-8: the byte offset of the first bad sequence and, for a body
 * below the chunked size that is JSON apart from that, the field it is in.
 */
export function invalidUtf8(body: Buffer): AppError {
  const offset = firstInvalidUtf8Offset(body);
  const field = body.length < CHUNKED_PARSE_BYTES ? fieldAtByte(body, offset) : null;
  const detail = `The body is not UTF-8: the bytes at offset ${offset}${field ? ` (in ${field.path})` : ''} are not a UTF-8 character`;
  return new AppError(TextErrors.INVALID_UTF8, detail, { body: { offset }, ...(field ? { errors: [field] } : {}) });
}

const lossy = new TextDecoder('utf-8', { ignoreBOM: true });

// A private-use character stands in for the bad bytes, so the parsed body shows which string held them.
const MARK = '\u{10FFFD}';

function fieldAtByte(body: Buffer, offset: number): FieldError | null {
  const rest = lossy.decode(body.subarray(offset));
  const text = lossy.decode(body.subarray(0, offset)) + MARK + rest.slice(1);
  if (text.indexOf(MARK) !== text.lastIndexOf(MARK)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const found = runNow(findText(value, 'body', (s) => (s.includes(MARK) ? 'contains bytes that are not UTF-8' : null)));
  return found ? { path: found.path.replaceAll(MARK, '\uFFFD'), message: found.message } : null;
}
