import { describe, expect, it } from 'vitest';
import { bpsToPercentInput, minorToInput, parseMinor, percentToBps } from '../../web/src/kit/amounts.js';

// The console's money and rate fields: what a person types becomes integer minor units and basis
// points without passing through floating point.
describe('parsing money and rates typed into the console', () => {
  it.each([
    ['149', 'usd', 14900n],
    ['149.9', 'usd', 14990n],
    ['149.99', 'usd', 14999n],
    ['0,05', 'eur', 5n],
    [' 12.30 ', 'usd', 1230n],
    ['1500', 'jpy', 1500n],
    ['0.1', 'usd', 10n],
    ['999999999999.99', 'usd', 99999999999999n],
    ['12.', 'usd', 1200n],
  ])('%s %s is %s minor units', (text, currency, minor) => {
    expect(parseMinor(text, currency)).toBe(minor);
  });

  it.each([
    ['149.999', 'usd'],
    ['1.5', 'jpy'],
    ['-5', 'usd'],
    ['1e3', 'usd'],
    ['', 'usd'],
    ['abc', 'usd'],
  ])('%s in %s is not an amount', (text, currency) => {
    expect(parseMinor(text, currency)).toBeNull();
  });

  it('writes minor units back as the text of a money field', () => {
    expect(minorToInput(14900, 'usd')).toBe('149.00');
    expect(minorToInput(5, 'eur')).toBe('0.05');
    expect(minorToInput(1500, 'jpy')).toBe('1500');
    expect(minorToInput(99999999999999n, 'usd')).toBe('999999999999.99');
  });

  it.each([
    ['20', 2000],
    ['20.5', 2050],
    ['33.33', 3333],
    ['0', 0],
    ['100', 10000],
    ['0.01', 1],
  ])('%s %% is %i basis points', (text, bps) => {
    expect(percentToBps(text)).toBe(bps);
  });

  it.each(['100.01', '101', '12.345', '-1', 'twenty'])('%s %% is refused', (text) => {
    expect(percentToBps(text)).toBeNull();
  });

  it('writes basis points back as a percentage field', () => {
    expect(bpsToPercentInput(2050)).toBe('20.5');
    expect(bpsToPercentInput(3333)).toBe('33.33');
    expect(bpsToPercentInput(2000)).toBe('20');
    expect(bpsToPercentInput(5)).toBe('0.05');
    for (let bps = 0; bps <= 10_000; bps += 7) expect(percentToBps(bpsToPercentInput(bps))).toBe(bps);
  });
});
