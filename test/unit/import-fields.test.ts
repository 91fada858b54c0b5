import { describe, expect, it } from 'vitest';
import { isEmail, readEmail, readOptionalBoolean, readOptionalId, readOptionalText } from '../../src/platform/import/fields.js';

const ok = (value: unknown) => ({ ok: true, value });
const fail = (code: string, message: string) => ({ ok: false, code, message });

describe('readEmail', () => {
  it.each([
    { label: 'a plain address', input: 'ann@example.com', result: ok('ann@example.com') },
    { label: 'surrounding spaces (trimmed)', input: '  ann@example.com \t', result: ok('ann@example.com') },
    { label: 'upper case (kept; the database normalises)', input: 'Ann@Example.COM', result: ok('Ann@Example.COM') },
    { label: 'plus addressing and subdomains', input: 'ann+shop@mail.example.co.uk', result: ok('ann+shop@mail.example.co.uk') },
    { label: 'undefined', input: undefined, result: fail('REQUIRED', 'email is required') },
    { label: 'null', input: null, result: fail('REQUIRED', 'email is required') },
    { label: 'blank text', input: '   ', result: fail('REQUIRED', 'email is required') },
    { label: 'a number', input: 42, result: fail('INVALID_TYPE', 'email must be a string') },
    { label: 'an array', input: ['ann@example.com'], result: fail('INVALID_TYPE', 'email must be a string') },
    { label: 'no at sign', input: 'ann.example.com', result: fail('INVALID_EMAIL', 'email is not a valid e-mail address') },
    { label: 'no domain dot', input: 'ann@localhost', result: fail('INVALID_EMAIL', 'email is not a valid e-mail address') },
    { label: 'two at signs', input: 'ann@@example.com', result: fail('INVALID_EMAIL', 'email is not a valid e-mail address') },
    { label: 'a space inside', input: 'ann lee@example.com', result: fail('INVALID_EMAIL', 'email is not a valid e-mail address') },
    { label: 'a formula', input: '=HYPERLINK("x")@example.com', result: fail('INVALID_EMAIL', 'email is not a valid e-mail address') },
    {
      label: 'more than 254 characters',
      input: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`,
      result: fail('INVALID_EMAIL', 'email is not a valid e-mail address'),
    },
  ])('$label', ({ input, result }) => {
    expect(readEmail(input)).toEqual(result);
  });

  it('isEmail agrees with readEmail on trimmed text', () => {
    expect(isEmail('ann@example.com')).toBe(true);
    expect(isEmail('ann@localhost')).toBe(false);
    expect(isEmail(`${'a'.repeat(250)}@b.co`)).toBe(false);
  });
});

describe('readOptionalText', () => {
  it.each([
    { label: 'undefined is null', input: undefined, result: ok(null) },
    { label: 'null is null', input: null, result: ok(null) },
    { label: 'blank text is null', input: '  ', result: ok(null) },
    { label: 'text is trimmed', input: '  Ann  ', result: ok('Ann') },
    { label: 'text of exactly the limit', input: 'x'.repeat(10), result: ok('x'.repeat(10)) },
    { label: 'the limit applies after trimming', input: ` ${'x'.repeat(10)} `, result: ok('x'.repeat(10)) },
    { label: 'text over the limit', input: 'x'.repeat(11), result: fail('TOO_LONG', 'firstName must be at most 10 characters') },
    { label: 'a number', input: 7, result: fail('INVALID_TYPE', 'firstName must be a string') },
    { label: 'a boolean', input: true, result: fail('INVALID_TYPE', 'firstName must be a string') },
    { label: 'an object', input: { first: 'Ann' }, result: fail('INVALID_TYPE', 'firstName must be a string') },
  ])('$label', ({ input, result }) => {
    expect(readOptionalText(input, 'firstName', 10)).toEqual(result);
  });
});

describe('readOptionalId', () => {
  const invalid = fail('INVALID_TYPE', 'productId must be a positive integer');
  it.each([
    { label: 'undefined is null', input: undefined, result: ok(null) },
    { label: 'blank text is null', input: ' ', result: ok(null) },
    { label: 'a JSON integer', input: 42, result: ok(42) },
    { label: 'CSV digits', input: '42', result: ok(42) },
    { label: 'CSV digits with spaces', input: ' 42 ', result: ok(42) },
    { label: 'leading zeros', input: '007', result: ok(7) },
    { label: 'the largest integer id', input: 2147483647, result: ok(2147483647) },
    { label: 'zero', input: 0, result: invalid },
    { label: 'zero as text', input: '0', result: invalid },
    { label: 'a negative number', input: -1, result: invalid },
    { label: 'a negative number as text', input: '-1', result: invalid },
    { label: 'a fraction', input: 1.5, result: invalid },
    { label: 'a fraction as text', input: '1.5', result: invalid },
    { label: 'exponent notation', input: '1e3', result: invalid },
    { label: 'beyond the integer column', input: 2147483648, result: invalid },
    { label: 'beyond the integer column as text', input: '2147483648', result: invalid },
    { label: 'a product name', input: 'Nebula Synth', result: invalid },
    { label: 'a boolean', input: true, result: invalid },
    { label: 'NaN', input: Number.NaN, result: invalid },
  ])('$label', ({ input, result }) => {
    expect(readOptionalId(input, 'productId')).toEqual(result);
  });
});

describe('readOptionalBoolean', () => {
  const invalid = fail('INVALID_TYPE', 'marketingConsent must be true or false');
  it.each([
    { label: 'undefined is null', input: undefined, result: ok(null) },
    { label: 'blank text is null', input: '', result: ok(null) },
    { label: 'JSON true', input: true, result: ok(true) },
    { label: 'JSON false', input: false, result: ok(false) },
    ...['true', 'TRUE', ' yes ', 'Y', '1', 'y'].map((input) => ({ label: `"${input}"`, input, result: ok(true) })),
    ...['false', 'False', 'no', 'N', '0', 'n'].map((input) => ({ label: `"${input}"`, input, result: ok(false) })),
    { label: 'a JSON number', input: 1, result: invalid },
    { label: 'other text', input: 'maybe', result: invalid },
    { label: 'an array', input: [true], result: invalid },
  ])('$label', ({ input, result }) => {
    expect(readOptionalBoolean(input, 'marketingConsent')).toEqual(result);
  });
});
