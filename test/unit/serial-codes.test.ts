import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CODE_ALPHABET, newSerialCode, newSerialCodes, SERIAL_PREFIX_PATTERN, serialKey } from '../../src/platform/ids/codes.js';

const SYMBOL = '[23456789ABCDEFGHJKLMNPQRSTUVWXYZ]';
const CODE = new RegExp(`^${SYMBOL}{5}(-${SYMBOL}{5}){4}$`);
const LOOK_ALIKES = ['0', 'O', '1', 'I'];

const prefix = fc.stringMatching(/^[A-Z0-9]{1,12}$/);

describe('serial code alphabet', () => {
  it('has 32 distinct upper-case letters and digits without look-alikes', () => {
    expect(CODE_ALPHABET).toHaveLength(32);
    expect(new Set(CODE_ALPHABET).size).toBe(32);
    expect(CODE_ALPHABET).toMatch(/^[A-Z2-9]+$/);
    for (const c of LOOK_ALIKES) expect(CODE_ALPHABET).not.toContain(c);
  });
});

describe('newSerialCode', () => {
  it.each([
    { label: 'no prefix', prefix: undefined, pattern: CODE },
    { label: 'a null prefix', prefix: null, pattern: CODE },
    { label: 'an empty prefix', prefix: '', pattern: CODE },
    { label: 'a prefix', prefix: 'SYNTH', pattern: new RegExp(`^SYNTH-${CODE.source.slice(1)}`) },
    { label: 'a digit prefix', prefix: '2027', pattern: new RegExp(`^2027-${CODE.source.slice(1)}`) },
  ])('makes five dash-separated groups of five symbols with $label', ({ prefix: p, pattern }) => {
    expect(newSerialCode(p)).toMatch(pattern);
  });

  it('always matches the format, with the prefix first (property)', () => {
    fc.assert(
      fc.property(fc.option(prefix, { nil: undefined }), (p) => {
        const code = newSerialCode(p);
        const groups = p ? code.slice(p.length + 1) : code;
        if (p) expect(code.startsWith(`${p}-`)).toBe(true);
        expect(groups).toMatch(CODE);
        expect(serialKey(code)).toHaveLength((p?.length ?? 0) + 25);
      }),
      { numRuns: 2_000 },
    );
  });

  it('gives 10,000 distinct codes', () => {
    const codes = Array.from({ length: 10_000 }, () => newSerialCode());
    expect(new Set(codes).size).toBe(10_000);
    expect(new Set(codes.map(serialKey)).size).toBe(10_000);
  });

  it('uses every symbol about equally often', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) for (const c of newSerialCode().replaceAll('-', '')) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect([...counts.keys()].sort().join('')).toBe([...CODE_ALPHABET].sort().join(''));
    const expected = (10_000 * 25) / 32;
    // Far outside the binomial spread (about 86); a biased generator lands here.
    for (const [symbol, n] of counts) expect(Math.abs(n - expected), symbol).toBeLessThan(expected * 0.1);
  });
});

describe('newSerialCodes', () => {
  it.each([
    { label: 'no prefix', prefix: undefined, pattern: CODE },
    { label: 'a prefix', prefix: 'SYNTH', pattern: new RegExp(`^SYNTH-${CODE.source.slice(1)}`) },
  ])('makes as many codes as asked, each in the format, with $label', ({ prefix: p, pattern }) => {
    const codes = newSerialCodes(500, p);
    expect(codes).toHaveLength(500);
    for (const code of codes) expect(code).toMatch(pattern);
  });

  it('makes no codes for a count of 0', () => {
    expect(newSerialCodes(0)).toEqual([]);
  });

  it('gives 10,000 distinct codes in one call, every symbol about equally often', () => {
    const codes = newSerialCodes(10_000);
    expect(new Set(codes.map(serialKey)).size).toBe(10_000);
    const counts = new Map<string, number>();
    for (const code of codes) for (const c of code.replaceAll('-', '')) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect([...counts.keys()].sort().join('')).toBe([...CODE_ALPHABET].sort().join(''));
    const expected = (10_000 * 25) / 32;
    for (const [symbol, n] of counts) expect(Math.abs(n - expected), symbol).toBeLessThan(expected * 0.1);
  });
});

describe('SERIAL_PREFIX_PATTERN', () => {
  it.each(['A', 'SYNTH', 'AB12', 'ABCDEFGHIJKL'])('accepts %s', (p) => expect(SERIAL_PREFIX_PATTERN.test(p)).toBe(true));
  it.each(['', 'abc', 'AB-C', 'AB C', 'ABCDEFGHIJKLM', 'ÄB'])('refuses %j', (p) => expect(SERIAL_PREFIX_PATTERN.test(p)).toBe(false));
});

describe('serialKey', () => {
  it.each([
    { label: 'a grouped code', code: 'ABCDE-FGHJK', key: 'ABCDEFGHJK' },
    { label: 'lower case', code: 'abcd-efgh-jk', key: 'ABCDEFGHJK' },
    { label: 'mixed separators and spaces', code: ' ab cd_ef.gh/jk ', key: 'ABCDEFGHJK' },
    { label: 'digits', code: '2027-xy-9', key: '2027XY9' },
    { label: 'only separators', code: '----', key: '' },
    { label: 'non-ASCII letters (dropped)', code: 'ÄBC-DÉF', key: 'BCDF' },
  ])('normalises $label', ({ code, key }) => {
    expect(serialKey(code)).toBe(key);
  });

  it('is idempotent and ignores case and separators (property)', () => {
    const code = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,40}$/);
    fc.assert(
      fc.property(code, (c) => {
        const key = serialKey(c);
        expect(serialKey(key)).toBe(key);
        expect(serialKey(c.toLowerCase())).toBe(key);
        expect(serialKey(c.replace(/[-_ .]/g, ''))).toBe(key);
        expect(key).toMatch(/^[A-Z0-9]*$/);
      }),
    );
  });
});
