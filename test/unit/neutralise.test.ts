import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { neutraliseCell } from '../../src/platform/csv/neutralise.js';

const DANGEROUS = ['=', '+', '-', '@', '\t', '\r'];

describe('neutraliseCell', () => {
  it.each([
    { label: 'formula', input: '=SUM(A1:A9)', output: "'=SUM(A1:A9)" },
    { label: 'command injection formula', input: '=cmd|\' /C calc\'!A0', output: "'=cmd|' /C calc'!A0" },
    { label: 'plus sign', input: '+1+1', output: "'+1+1" },
    { label: 'minus sign', input: '-2+3', output: "'-2+3" },
    { label: 'negative number as text', input: '-5', output: "'-5" },
    { label: 'at sign', input: '@SUM(1)', output: "'@SUM(1)" },
    { label: 'tab', input: '\t=1', output: "'\t=1" },
    { label: 'carriage return', input: '\r=1', output: "'\r=1" },
    { label: 'a lone dangerous character', input: '=', output: "'=" },
    { label: 'already quoted formula (quoted again)', input: "'=1", output: "'=1" },
  ])('prefixes a cell starting with a $label', ({ input, output }) => {
    expect(neutraliseCell(input)).toBe(output);
  });

  it.each([
    { label: 'empty text', input: '' },
    { label: 'a name', input: 'Ann Lee' },
    { label: 'an e-mail address', input: 'ann@example.com' },
    { label: 'a dangerous character later in the text', input: 'a=b+c-d@e' },
    { label: 'digits', input: '42' },
    { label: 'a leading space before a formula', input: ' =1' },
    { label: 'a leading newline', input: '\n=1' },
    { label: 'a quote', input: "'hello" },
    { label: 'non-ASCII text', input: 'Ωmega Synth' },
  ])('leaves $label untouched', ({ input }) => {
    expect(neutraliseCell(input)).toBe(input);
  });

  it('never returns a cell that starts with a dangerous character, unless it starts with a quote', () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.tuple(fc.constantFrom(...DANGEROUS), fc.string()).map(([first, rest]) => first + rest),
    );
    fc.assert(
      fc.property(text, (input) => {
        const output = neutraliseCell(input);
        expect(output.startsWith("'") || !DANGEROUS.includes(output.charAt(0))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('only ever adds one leading quote and keeps the text otherwise', () => {
    fc.assert(
      fc.property(fc.string(), (input) => {
        const output = neutraliseCell(input);
        expect(output === input || output === `'${input}`).toBe(true);
        expect(output.startsWith("'")).toBe(input.startsWith("'") || DANGEROUS.includes(input.charAt(0)));
      }),
      { numRuns: 2000 },
    );
  });

  it('is idempotent', () => {
    fc.assert(fc.property(fc.string(), (input) => neutraliseCell(neutraliseCell(input)) === neutraliseCell(input)));
  });
});
