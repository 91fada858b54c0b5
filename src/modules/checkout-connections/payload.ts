import type { TSchema, Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

// Reading a verified provider payload: each adapter declares the part of the payload it relies on
// as a TypeBox schema; a payload that lacks it is a failed event with the reason, never a 500.

/** The signature did not verify: nothing is recorded (400). */
export class SignatureRejected extends Error {}

/** A payload that does not carry what its event type must (the event log's reason). */
export class PayloadUnreadable extends Error {}

export function reader<S extends TSchema>(schema: S, what: string) {
  const check = TypeCompiler.Compile(schema);
  return (value: unknown): Static<S> => {
    if (check.Check(value)) return value;
    const first = check.Errors(value).First();
    throw new PayloadUnreadable(`${what}: ${first ? `${first.path || '/'} ${first.message}` : 'unexpected shape'}`);
  };
}

/** An amount the provider sends as a string of digits (Paddle), as a number of minor units. */
export function digits(value: string, what: string): number {
  const n = Number(value);
  if (!/^\d{1,15}$/.test(value) || !Number.isSafeInteger(n)) throw new PayloadUnreadable(`${what} is not an amount in minor units: ${value.slice(0, 40)}`);
  return n;
}

/** A Unix time in seconds or an RFC 3339 time, as a Date (now when absent or unreadable). */
export function timeOf(value: number | string | null | undefined): Date {
  if (value === null || value === undefined) return new Date();
  const at = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  return Number.isNaN(at.getTime()) ? new Date() : at;
}
