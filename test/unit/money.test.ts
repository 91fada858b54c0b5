import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMajorUnits, minorDigits, parseMajorUnits } from '../../src/platform/money/money.js';

describe('parseMajorUnits', () => {
  it.each([
    ['a JSON number with cents', 19.99, 'usd', 1999],
    ['a JSON number that binary floating point cannot hold exactly', 0.29, 'usd', 29],
    ['decimal text', '49.90', 'usd', 4990],
    ['whole units', '49', 'eur', 4900],
    ['surrounding spaces', ' 5.5 ', 'gbp', 550],
    ['zero', 0, 'usd', 0],
    ['trailing zeros beyond the minor digits', '12.500', 'usd', 1250],
    ['a zero-decimal currency', '500', 'jpy', 500],
    ['a three-decimal currency', '1.234', 'kwd', 1234],
    ['the largest amount', '10000000000', 'usd', 1_000_000_000_000],
    ['the largest amount of a zero-decimal currency', '1000000000000', 'jpy', 1_000_000_000_000],
  ])('reads %s', (_label, value, currency, minor) => {
    expect(parseMajorUnits(value, currency)).toEqual({ ok: true, minor });
  });

  it.each([
    ['more decimals than the currency has', '1.999', 'usd'],
    ['decimals in a zero-decimal currency', '1.5', 'jpy'],
    ['a negative amount', '-1.00', 'usd'],
    ['a currency sign', '$5', 'usd'],
    ['digit grouping', '1,299.00', 'usd'],
    ['an exponent', '1e3', 'usd'],
    ['an amount above the limit', '10000000000.01', 'usd'],
    ['a zero-decimal amount above the limit', '1000000000001', 'jpy'],
    ['a huge number', 1e21, 'usd'],
    ['infinity', Number.POSITIVE_INFINITY, 'usd'],
    ['a boolean', true, 'usd'],
    ['empty text', '', 'usd'],
  ])('refuses %s', (_label, value, currency) => {
    expect(parseMajorUnits(value, currency).ok).toBe(false);
  });

  it('round-trips every amount in cents through its text form', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000_000 }), fc.constantFrom('usd', 'jpy', 'kwd'), (minor, currency) => {
        expect(parseMajorUnits(formatMajorUnits(minor, currency), currency)).toEqual({ ok: true, minor });
      }),
    );
  });
});

describe('formatMajorUnits', () => {
  it.each([
    [4999, 'usd', '49.99'],
    [5, 'usd', '0.05'],
    [0, 'eur', '0.00'],
    [500, 'jpy', '500'],
    [1234, 'kwd', '1.234'],
    [-150, 'usd', '-1.50'],
  ])('formats %i %s as %s', (minor, currency, text) => {
    expect(formatMajorUnits(minor, currency)).toBe(text);
  });

  it('knows the minor digits of currencies without cents', () => {
    expect([minorDigits('JPY'), minorDigits('usd'), minorDigits('BHD')]).toEqual([0, 2, 3]);
  });
});
