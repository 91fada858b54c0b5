import { randomBytes } from 'node:crypto';

/**
 * 32 symbols without look-alikes (no 0/O, no 1/I): a code read over the phone or
 * typed from a box survives. 32 divides 256, so `byte & 31` is unbiased.
 */
export const CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';

export function randomSymbols(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += CODE_ALPHABET[bytes[i]! & 31];
  return out;
}

export const SERIAL_GROUPS = 5;
export const SERIAL_GROUP_LENGTH = 5;
export const SERIAL_PREFIX_PATTERN = /^[A-Z0-9]{1,12}$/;

/** A serial code: optional prefix, then five groups of five symbols (125 random bits). */
export function newSerialCode(prefix?: string | null): string {
  const groups = Array.from({ length: SERIAL_GROUPS }, () => randomSymbols(SERIAL_GROUP_LENGTH));
  return [...(prefix ? [prefix] : []), ...groups].join('-');
}

/** The comparison key of a serial: what the database's `code_key` column holds. */
export function serialKey(code: string): string {
  return code.replace(/[^A-Za-z0-9]/g, '').toUpperCase();
}

export function newProductAppId(): string {
  return `app_${randomSymbols(20).toLowerCase()}`;
}
