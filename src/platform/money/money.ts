/**
 * Money is held as integer minor units (cents) and never passes through
 * floating point: decimal text is split into digits, and JSON numbers are read
 * from their shortest round-trip text ("49.99"), which is exact.
 */

// ISO 4217 currencies without minor units, and those with three.
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'isk', 'jpy', 'kmf', 'krw', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const THREE_DECIMAL = new Set(['bhd', 'iqd', 'jod', 'kwd', 'lyd', 'omr', 'tnd']);

export const CURRENCY = /^[a-z]{3}$/;

export function minorDigits(currency: string): number {
  const c = currency.toLowerCase();
  if (ZERO_DECIMAL.has(c)) return 0;
  if (THREE_DECIMAL.has(c)) return 3;
  return 2;
}

/** Largest amount accepted anywhere: 10^12 minor units (ten billion dollars), well inside 2^53. */
export const MAX_MINOR_UNITS = 1_000_000_000_000;

export type MoneyParse = { ok: true; minor: number } | { ok: false; message: string };

/**
 * Parses an amount in major units ("49.99", 49.99, "1,299.00" is refused: no
 * grouping) into minor units of `currency`. Negative amounts, exponents and more
 * fraction digits than the currency has are refused.
 */
export function parseMajorUnits(value: unknown, currency: string): MoneyParse {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, message: 'must be a finite amount' };
    text = String(value);
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return { ok: false, message: 'must be an amount such as 49.99' };
  }
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return { ok: false, message: 'must be a non-negative amount such as 49.99 (no currency sign, grouping or exponent)' };
  const digits = minorDigits(currency);
  const whole = match[1]!;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > digits) {
    return { ok: false, message: digits === 0 ? `${currency.toUpperCase()} has no minor unit` : `at most ${digits} decimal places for ${currency.toUpperCase()}` };
  }
  // A zero-decimal currency reaches the limit with 13 whole digits; more can never fit (and would lose precision).
  if (whole.replace(/^0+/, '').length > 13) return { ok: false, message: 'is too large' };
  const minor = Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  if (minor > MAX_MINOR_UNITS) return { ok: false, message: 'is too large' };
  return { ok: true, minor };
}

/** Minor units as a decimal string in major units: 4999 usd → "49.99", 500 jpy → "500". */
export function formatMajorUnits(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  if (digits === 0) return String(minor);
  const sign = minor < 0 ? '-' : '';
  const text = String(Math.abs(minor)).padStart(digits + 1, '0');
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/**
 * SQL text that writes `minor` (an integer column) of `currency` (a currency column) as `formatMajorUnits` does, for
 * answers PostgreSQL writes as JSON. The expressions must be trusted column references, never input.
 */
export function majorUnitsSql(minor: string, currency: string): string {
  const list = (codes: Set<string>) => [...codes].map((c) => `'${c}'`).join(', ');
  const fraction = (digits: number) => {
    const unit = 10 ** digits;
    return `case when ${minor} < 0 then '-' else '' end || (abs(${minor}) / ${unit})::text || '.' || lpad((abs(${minor}) % ${unit})::text, ${digits}, '0')`;
  };
  const code = `lower(rtrim(${currency}))`;
  return `case when ${code} in (${list(ZERO_DECIMAL)}) then (${minor})::text when ${code} in (${list(THREE_DECIMAL)}) then ${fraction(3)} else ${fraction(2)} end`;
}
