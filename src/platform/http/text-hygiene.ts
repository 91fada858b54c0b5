import type { FieldError } from './errors.js';

// PostgreSQL text cannot hold U+0000, and an unpaired UTF-16 surrogate has no UTF-8 form (drivers
// would silently turn it into U+FFFD). Both are refused at the edge with a 400 naming the field,
// so no route reaches the database with them and no export stream is cut after its headers.

const NUL = '\u0000';
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as text, or null when it can. */
export function textProblem(value: string): string | null {
  if (value.includes(NUL)) return 'contains a NUL character (U+0000)';
  if (UNPAIRED_SURROGATE.test(value)) return 'contains an unpaired UTF-16 surrogate (not valid Unicode)';
  return null;
}

/** The first ill-formed string (or key) inside a parsed JSON value, query or params object. */
export function findIllFormedText(value: unknown, path: string, depth = 0): FieldError | null {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path, message: problem } : null;
  }
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findIllFormedText(value[i], `${path}/${i}`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    const keyProblem = textProblem(key);
    if (keyProblem) return { path: `${path}/${key.replaceAll(NUL, '\\u0000')}`, message: `the key ${keyProblem}` };
    const found = findIllFormedText(inner, `${path}/${key}`, depth + 1);
    if (found) return found;
  }
  return null;
}
