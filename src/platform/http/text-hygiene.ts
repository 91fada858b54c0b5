import { setImmediate as nextTurn } from 'node:timers/promises';
import { defineErrors, type CodesOf, type ErrorSpec, type FieldError } from './errors.js';

// PostgreSQL text cannot hold U+0000, and an unpaired UTF-16 surrogate has no UTF-8 form (drivers
// would silently turn it into U+FFFD). Both are refused at the edge with a 400 naming the field,
// so no route reaches the database with them and no export stream is cut after its headers.
// Bytes that are not UTF-8 are refused the same way (INVALID_UTF8) by the body and CSV readers:
// nothing a client sends is replaced or stripped silently.

const textErrorSpecs = {
  INVALID_UTF8: {
    status: 400,
    title: 'The request contains bytes that are not UTF-8',
    description:
      'a JSON body (`offset` of the first bad byte; `errors` names the field when it can), a CSV upload (`row`, `line`, `column`) or a form field that is not UTF-8; nothing is decoded with U+FFFD in place of the bytes',
  },
} as const satisfies Record<string, ErrorSpec>;
export const TextErrors = defineErrors(textErrorSpecs);

declare module './errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof textErrorSpecs> {}
}

const NUL = '\u0000';
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A text's length in Unicode code points, as the schemas (Ajv's default `unicode: true`) and
 * PostgreSQL count it: an emoji is one character, not two UTF-16 code units. Every hand-written
 * length bound uses this, so 100 emoji fit a 100-character field everywhere.
 */
export function textLength(value: string): number {
  let length = value.length;
  for (let i = 0; i < value.length - 1; i += 1) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length -= 1;
        i += 1;
      }
    }
  }
  return length;
}

/** Why a string cannot be stored as text, or null when it can. */
export function textProblem(value: string): string | null {
  if (value.includes(NUL)) return 'contains a NUL character (U+0000)';
  if (UNPAIRED_SURROGATE.test(value)) return 'contains an unpaired UTF-16 surrogate (not valid Unicode)';
  return null;
}

/**
 * JSON bodies whose text was seen to hold no `\u0000` or surrogate escape (the only ways NUL and
 * lone surrogates can enter valid UTF-8 JSON): the walk below has nothing to find in them, and
 * skipping it keeps a large import from holding the event loop.
 */
const knownClean = new WeakSet<object>();

export function markTextChecked(value: unknown): void {
  if (value !== null && typeof value === 'object') knownClean.add(value);
}

/**
 * Walks strings and keys in document order, pausing (a bare `yield`) every few thousand values so
 * that an async caller can let other requests run; a sync caller just runs it to the end.
 */
export function* findText(root: unknown, rootPath: string, problem: (text: string) => string | null): Generator<void, FieldError | null> {
  const stack: Array<[unknown, string, number]> = [[root, rootPath, 0]];
  let visited = 0;
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!;
    if (++visited % 5_000 === 0) yield;
    if (typeof value === 'string') {
      const found = problem(value);
      if (found) return { path, message: found };
      continue;
    }
    if (value === null || typeof value !== 'object' || depth > 64) continue;
    const children: Array<[unknown, string, number]> = [];
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) children.push([value[i], `${path}/${i}`, depth + 1]);
    } else {
      for (const [key, inner] of Object.entries(value)) {
        const keyProblem = problem(key);
        if (keyProblem) return { path: `${path}/${key.replaceAll(NUL, '\\u0000')}`, message: `the key ${keyProblem}` };
        children.push([inner, `${path}/${key}`, depth + 1]);
      }
    }
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]!);
  }
  return null;
}

/** Runs a walk to its end on the spot. */
export function runNow<T>(walk: Generator<void, T>): T {
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
  }
}

/** Runs a walk, letting other work run at each pause. */
export async function runYielding<T>(walk: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}

/** The first ill-formed string (or key) inside a parsed JSON value, query or params object. */
export function findIllFormedText(value: unknown, path: string): FieldError | null {
  if (value !== null && typeof value === 'object' && knownClean.has(value)) return null;
  return runNow(findText(value, path, textProblem));
}
