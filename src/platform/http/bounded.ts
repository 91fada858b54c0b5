import { type ArrayOptions, type IntegerOptions, type StringOptions, type TSchema, Type } from '@sinclair/typebox';

/**
 * Bounded building blocks for request schemas. A client must not be able to send a string, a number
 * or a list the service has not sized (OWASP API4, unrestricted resource consumption), so every
 * request field is built from these or states its own bounds; test/platform/request-bounds.test.ts
 * fails on one that does not, and `npm run openapi:owasp` checks the same in the published document.
 * Lengths are in characters (Unicode code points: Ajv counts a character outside the BMP once).
 */

/** The largest value of a PostgreSQL `integer` column (record ids, counts, amounts kept as integer). */
export const INT32_MAX = 2_147_483_647;

/** Text lengths a request may carry, by what the text is. */
export const TEXT_LIMITS = {
  /** Short machine values: a version, a platform, a machine id, a policy version. */
  code: 100,
  /** What a person reads as a name: a product, an agreement, a reseller, a title. */
  name: 200,
  /** RFC 5321: a forward path is at most 256 octets including the angle brackets. */
  email: 254,
  /** A reason or a moderation note. */
  note: 2_000,
  /** An RFC 3339 date-time (a nanosecond fraction and an offset fit with room to spare). */
  dateTime: 64,
  /** A header value: an `Authorization` bearer token. */
  header: 8_192,
} as const;

/**
 * An integer between `minimum` and `maximum`, with the OpenAPI `format` those bounds imply (`int32`
 * when both fit a 32-bit signed integer, otherwise `int64`), so generated clients pick the right type.
 */
export function Int(minimum: number, maximum: number, options: IntegerOptions = {}) {
  if (!Number.isSafeInteger(minimum) || !Number.isSafeInteger(maximum) || minimum > maximum) {
    throw new Error(`Int(${minimum}, ${maximum}): bounds must be safe integers, minimum first`);
  }
  const format = minimum >= -INT32_MAX - 1 && maximum <= INT32_MAX ? 'int32' : 'int64';
  return Type.Integer({ minimum, maximum, format, ...options });
}

/** A record id: a positive PostgreSQL `integer`. */
export const Id = (options: IntegerOptions = {}) => Int(1, INT32_MAX, options);

/** Text of at most `maxLength` characters. */
export const Text = (maxLength: number, options: StringOptions = {}) => Type.String({ maxLength, ...options });

/** A name a person reads: 1 to 200 characters. */
export const Name = (options: StringOptions = {}) => Text(TEXT_LIMITS.name, { minLength: 1, ...options });

/** An e-mail address (the `email` format, at most 254 characters). */
export const Email = (options: StringOptions = {}) => Text(TEXT_LIMITS.email, { format: 'email', ...options });

/** A reason or note of at most 2,000 characters. */
export const Note = (options: StringOptions = {}) => Text(TEXT_LIMITS.note, options);

/** An RFC 3339 date-time that PostgreSQL can store (the validator's `date-time` format). */
export const DateTime = (options: StringOptions = {}) => Text(TEXT_LIMITS.dateTime, { format: 'date-time', ...options });

/** An ISO 4217 currency code: three letters, any case. */
export const Currency = (options: StringOptions = {}) => Text(3, { pattern: '^[A-Za-z]{3}$', ...options });

/** A list of at most `maxItems` items. */
export const List = <T extends TSchema>(items: T, maxItems: number, options: ArrayOptions = {}) => Type.Array(items, { maxItems, ...options });
