import { parseArgs } from 'node:util';
import type { TSchema } from '@sinclair/typebox';
import { isPermission, WILDCARD } from '../platform/auth/permissions.js';
import { isEmail } from '../platform/import/fields.js';

/** A command line the CLI cannot run: message on stderr, exit 2. */
export class UsageError extends Error {}

export type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;
export type OptionValues = Record<string, string | boolean | undefined>;

/** Strict parsing: an unknown option, a missing value or a stray argument is a usage error, never a stack trace. */
export function parseOptions(args: string[], options: OptionSpec, maxPositionals: number): { values: OptionValues; positionals: string[] } {
  let parsed: { values: OptionValues; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: maxPositionals > 0 }) as { values: OptionValues; positionals: string[] };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.positionals.length > maxPositionals) throw new UsageError(`Unexpected argument "${parsed.positionals[maxPositionals]}"`);
  return parsed;
}

export const str = (values: OptionValues, name: string): string | undefined => values[name] as string | undefined;
export const flag = (values: OptionValues, name: string): boolean => values[name] === true;

export function required(values: OptionValues, name: string): string {
  const value = str(values, name);
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

const MAX_ID = 2147483647;

/** A database id: a positive integer within PostgreSQL's integer range. */
export function id(value: string, name: string): number {
  if (!/^[1-9]\d{0,9}$/.test(value.trim()) || Number(value) > MAX_ID) throw new UsageError(`--${name} must be an id (a positive integer), got "${value}"`);
  return Number(value);
}

export function optionalInt(values: OptionValues, name: string): number | undefined {
  const value = str(values, name);
  if (value === undefined) return undefined;
  if (!/^-?\d{1,10}$/.test(value.trim())) throw new UsageError(`--${name} must be an integer, got "${value}"`);
  return Number(value);
}

export function email(value: string, name: string): string {
  const trimmed = value.trim();
  if (!isEmail(trimmed)) throw new UsageError(`--${name} must be an e-mail address, got "${value}"`);
  return trimmed;
}

/** `--permissions a,b` (names from the catalogue, or `*`); an empty value means none. */
export function permissions(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value.split(',').map((p) => p.trim()).filter((p) => p !== '');
  const unknown = names.filter((p) => p !== WILDCARD && !isPermission(p));
  if (unknown.length > 0) throw new UsageError(`Unknown permission ${unknown.map((p) => `"${p}"`).join(', ')} (see "patchbay member add --help" for the catalogue)`);
  return [...new Set(names)];
}

/** `--products all` or a comma-separated list of product ids; an empty value means none. */
export function products(value: string | undefined): number[] | 'all' | undefined {
  if (value === undefined) return undefined;
  if (value.trim().toLowerCase() === 'all') return 'all';
  return [...new Set(value.split(',').map((p) => p.trim()).filter((p) => p !== '').map((p) => id(p, 'products')))];
}

const kebab = (field: string) => field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Checks a request body built from options against the API's own schema; problems name the option. */
export async function checkBody<T>(schema: TSchema, body: Record<string, unknown>): Promise<T> {
  // Imported here: the validator is a large module that `patchbay --help` and most commands never need. The
  // fixtures loader registers the string formats the schemas use (email, uri, date-time) with TypeBox when it loads;
  // without them a valid --active-from would fail as an unknown format.
  const [{ Value }] = await Promise.all([import('@sinclair/typebox/value'), import('../operator/fixtures.js')]);
  if (Value.Check(schema, body)) return body as T;
  const problems = [...Value.Errors(schema, body)].slice(0, 5).map((e) => `--${kebab(e.path.split('/')[1] ?? '')}: ${e.message}`);
  throw new UsageError([...new Set(problems)].join('\n'));
}

/** Drops options that were not given, so a body carries only what the operator asked for. */
export const defined = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
