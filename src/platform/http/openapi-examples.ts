/**
 * Deterministic examples generated from JSON schemas, for the OpenAPI document: every request and
 * response body gets one without anyone writing it by hand. They show shapes, not real data. A
 * value the schema gives (`examples`, `const`, `default`, `enum`) wins; otherwise the format, the
 * property name and the pattern pick one; every string is checked against its pattern and lengths.
 * test/platform/openapi-document.test.ts validates every generated example against its schema.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;
/** Resolves a `$ref` of the document (`#/components/schemas/X`). */
export type RefResolver = (ref: string) => Schema | undefined;

const MAX_DEPTH = 12;
const SAMPLE_TIME = '2026-11-24T10:00:00.000Z';

export function exampleFor(schema: unknown, resolve: RefResolver, name = ''): Json {
  return generate(schema, resolve, name, 0);
}

function generate(input: unknown, resolve: RefResolver, name: string, depth: number): Json {
  if (depth > MAX_DEPTH || input === true || input === undefined) return null;
  if (!isObject(input)) return null;
  const schema = input;
  if (typeof schema.$ref === 'string') return generate(resolve(schema.$ref), resolve, name, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0] as Json;
  if (schema.example !== undefined) return schema.example as Json;
  if (schema.const !== undefined) return schema.const as Json;
  if (schema.default !== undefined) return schema.default as Json;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as Json;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      // The first branch that is not just null: an example with a value says more.
      const branch = branches.find((b) => !(isObject(b) && b.type === 'null')) ?? branches[0];
      return generate({ ...withoutKeys(schema, key), ...(branch as Schema) }, resolve, name, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const merged: Record<string, Json> = {};
    for (const part of schema.allOf) {
      const value = generate(part, resolve, name, depth + 1);
      if (isObject(value)) Object.assign(merged, value);
    }
    return merged;
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? schema.type[0]) : schema.type;
  switch (type) {
    case 'object':
      return objectExample(schema, resolve, depth);
    case 'array': {
      const count = Math.max(1, Number(schema.minItems ?? 1));
      const max = schema.maxItems === undefined ? count : Number(schema.maxItems);
      const item = generate(schema.items, resolve, singular(name), depth + 1);
      return Array.from({ length: Math.min(count, max) }, () => item);
    }
    case 'integer':
    case 'number':
      return numberExample(schema, name, type === 'integer');
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return stringExample(schema, name);
    default: {
      // No type (an import cell takes anything): what the name or format suggests.
      if (isObject(schema.properties)) return objectExample(schema, resolve, depth);
      if (/(Id|_id)$/.test(name)) return 1;
      if (/consent|^is[A-Z]|^has[A-Z]/.test(name)) return true;
      return [...formatCandidates(schema.format), ...nameCandidates(name)][0] ?? null;
    }
  }
}

function objectExample(schema: Schema, resolve: RefResolver, depth: number): Json {
  const out: Record<string, Json> = {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, property] of Object.entries(properties)) out[key] = generate(property, resolve, key, depth + 1);
  return out;
}

function numberExample(schema: Schema, name: string, integer: boolean): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : undefined;
  let value = /cents|amount|price|minor/i.test(name) ? 4900 : /bps$/i.test(name) ? 1000 : 1;
  if (min !== undefined && value < min) value = min;
  if (max !== undefined && value > max) value = max;
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) value = Math.ceil(value / schema.multipleOf) * schema.multipleOf;
  return integer ? Math.round(value) : value;
}

function stringExample(schema: Schema, name: string): string {
  const candidates = [...formatCandidates(schema.format), ...nameCandidates(name), 'example'];
  const fits = (value: string) =>
    (typeof schema.pattern !== 'string' || new RegExp(schema.pattern, 'u').test(value)) &&
    value.length >= Number(schema.minLength ?? 0) &&
    value.length <= Number(schema.maxLength ?? Number.POSITIVE_INFINITY);
  const found = candidates.find(fits);
  if (found !== undefined) return found;
  if (typeof schema.pattern === 'string') {
    const made = fromPattern(schema.pattern);
    if (made !== null && fits(made)) return made;
  }
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Number.POSITIVE_INFINITY);
  return 'example'.padEnd(min, 'x').slice(0, Math.max(min, Math.min(max, 7)));
}

function formatCandidates(format: unknown): string[] {
  switch (format) {
    case 'email':
      return ['ann.lee@example.com'];
    case 'date-time':
      return [SAMPLE_TIME];
    case 'date':
      return [SAMPLE_TIME.slice(0, 10)];
    case 'uri':
    case 'url':
      return ['https://example.com/'];
    case 'uuid':
      return ['00000000-0000-4000-8000-000000000000'];
    case 'binary':
      return ['(file contents)'];
    default:
      return [];
  }
}

function nameCandidates(name: string): string[] {
  const n = name.toLowerCase();
  if (n.includes('email')) return ['ann.lee@example.com'];
  if (n === 'currency') return ['usd'];
  if (n.endsWith('url') || n.endsWith('_url') || n === 'location') return ['https://example.com/'];
  if (/(_at|at)$/.test(name) && !/format|stat/.test(n)) return [SAMPLE_TIME];
  if (n.includes('date')) return [SAMPLE_TIME.slice(0, 10)];
  if (n.includes('version')) return ['1.0.0'];
  if (n === 'first_name' || n === 'firstname') return ['Ann'];
  if (n === 'last_name' || n === 'lastname') return ['Lee'];
  if (n === 'name') return ['Example'];
  if (n === 'reason') return ['Support request'];
  if (n === 'platform') return ['macos'];
  if (n === 'serial' || n === 'code') return ['ABCD-EFGH-JKLM-NPQR'];
  return [];
}

/**
 * One string matching a regular expression of the simple kind used in the schemas: literals,
 * escapes (\d \w \s \S), classes, groups with alternatives (the first is taken) and quantifiers
 * (one repetition when allowed, else the minimum). Null for anything it does not understand.
 */
export function fromPattern(pattern: string): string | null {
  let i = 0;
  const atom = (): string | null => {
    const c = pattern[i++];
    if (c === undefined) return null;
    if (c === '\\') {
      const e = pattern[i++];
      if (e === 'd') return '1';
      if (e === 'w') return 'a';
      if (e === 's') return ' ';
      if (e === 'S' || e === 'W' || e === 'D') return e === 'D' ? 'a' : 'x';
      return e ?? null;
    }
    if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) return null;
      const body = pattern.slice(i, end);
      i = end + 1;
      if (body.startsWith('^')) return 'x';
      return body.startsWith('\\') ? (body[1] === 'd' ? '1' : (body[1] ?? null)) : (body[0] ?? null);
    }
    if (c === '(') {
      if (pattern.startsWith('?:', i)) i += 2;
      const alternatives = sequence();
      if (pattern[i] !== ')') return null;
      i += 1;
      return alternatives;
    }
    if (c === '.') return 'a';
    if (c === '^' || c === '$') return '';
    return c;
  };
  const quantified = (): string | null => {
    const value = atom();
    if (value === null) return null;
    const q = pattern[i];
    if (q === '?' || q === '*' || q === '+') {
      i += 1;
      return value;
    }
    if (q === '{') {
      const end = pattern.indexOf('}', i);
      const [minText, maxText] = pattern.slice(i + 1, end).split(',');
      i = end + 1;
      const min = Number(minText);
      const max = maxText === undefined ? min : maxText === '' ? Number.POSITIVE_INFINITY : Number(maxText);
      return value.repeat(Math.max(min, Math.min(1, max)));
    }
    return value;
  };
  const sequence = (): string | null => {
    let out = '';
    let first: string | null = null;
    while (i < pattern.length && pattern[i] !== ')') {
      if (pattern[i] === '|') {
        first ??= out;
        out = '';
        i += 1;
        continue;
      }
      const part = quantified();
      if (part === null) return null;
      out += part;
    }
    return first ?? out;
  };
  const result = sequence();
  return i === pattern.length ? result : null;
}

function singular(name: string): string {
  return name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.endsWith('s') ? name.slice(0, -1) : name;
}

function withoutKeys(schema: Schema, ...keys: string[]): Schema {
  const copy = { ...schema };
  for (const key of keys) delete copy[key];
  return copy;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
