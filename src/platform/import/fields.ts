/**
 * Field readers for import rows. JSON rows carry typed values; CSV rows carry
 * text. Each reader accepts both and reports a stable error code.
 */
import { textLength } from '../http/text-hygiene.js';
import type { RowError, RowErrorCode } from './errors.js';

export type FieldResult<T> = { ok: true; value: T } | { ok: false; code: RowErrorCode; message: string };

const ok = <T>(value: T): FieldResult<T> => ({ ok: true, value });
const fail = (code: RowErrorCode, message: string): FieldResult<never> => ({ ok: false, code, message });

// Same shape as the `email` format of ajv-formats; the database normalises case.
const EMAIL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

export const isEmail = (value: string) => value.length <= 254 && EMAIL.test(value);

const isBlank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

export function readEmail(value: unknown): FieldResult<string> {
  if (isBlank(value)) return fail('REQUIRED', 'email is required');
  if (typeof value !== 'string') return fail('INVALID_TYPE', 'email must be a string');
  const email = value.trim();
  if (email.length > 254 || !EMAIL.test(email)) return fail('INVALID_EMAIL', 'email is not a valid e-mail address');
  return ok(email);
}

export function readOptionalText(value: unknown, name: string, maxLength: number): FieldResult<string | null> {
  if (isBlank(value)) return ok(null);
  if (typeof value !== 'string') return fail('INVALID_TYPE', `${name} must be a string`);
  const text = value.trim();
  if (textLength(text) > maxLength) return fail('TOO_LONG', `${name} must be at most ${maxLength} characters`);
  return ok(text);
}

export function readOptionalId(value: unknown, name: string): FieldResult<number | null> {
  if (isBlank(value)) return ok(null);
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 2147483647) {
    return fail('INVALID_TYPE', `${name} must be a positive integer`);
  }
  return ok(n);
}

export function readOptionalBoolean(value: unknown, name: string): FieldResult<boolean | null> {
  if (isBlank(value)) return ok(null);
  if (typeof value === 'boolean') return ok(value);
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase();
    if (['true', 'yes', '1', 'y'].includes(text)) return ok(true);
    if (['false', 'no', '0', 'n'].includes(text)) return ok(false);
  }
  return fail('INVALID_TYPE', `${name} must be true or false`);
}

/**
 * Collects the field errors of one import row: `take` returns a reader's value,
 * or records its error and returns null, so a row reports every problem at once.
 */
export function rowErrors(row: number) {
  const errors: RowError[] = [];
  const take = <T>(field: string, result: FieldResult<T>): T | null => {
    if (result.ok) return result.value;
    errors.push({ row, field, code: result.code, message: result.message });
    return null;
  };
  return { errors, take };
}

/** The answer for a row that is not an object (JSON imports); CSV rows always are. */
export const notAnObject = (row: number): { ok: false; errors: RowError[] } => ({
  ok: false,
  errors: [{ row, field: '', code: 'INVALID_TYPE', message: 'each row must be an object' }],
});
