/**
 * Amounts as text, both ways, without floating point. A currency's minor-unit digits (shared with
 * format.ts), and what a person typed into money and rate fields: the text is
 * split at its decimal point and the digits are joined as an integer (the API's minor units and
 * basis points). Each answers `null` for text that is not such a number, so a form can say so.
 */

const digitsCache = new Map<string, number>();

/** How many minor-unit digits a currency has (2 for USD, 0 for JPY), from the reader's Intl data. */
export function currencyDigits(currency: string): number {
  const code = currency.toUpperCase();
  let digits = digitsCache.get(code);
  if (digits === undefined) {
    try {
      digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    digitsCache.set(code, digits);
  }
  return digits;
}

/** Digits with at most `decimals` places after a point (or comma): "149", "149.9", "0,05". */
function scaled(text: string, decimals: number): bigint | null {
  const match = /^\s*(\d{1,15})(?:[.,](\d*))?\s*$/.exec(text);
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) return null;
  return BigInt(match[1]! + fraction.padEnd(decimals, '0'));
}

/** "149.00" in USD → 14900n minor units; "1500" in JPY → 1500n. */
export function parseMinor(text: string, currency: string): bigint | null {
  return scaled(text, currencyDigits(currency));
}

/** 14900 minor units of USD → "149.00", the text a money field starts with. */
export function minorToInput(minor: number | bigint, currency: string): string {
  const digits = currencyDigits(currency);
  const text = BigInt(minor).toString().padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** A percentage with up to two decimals as basis points: "20" → 2000, "33.33" → 3333; above 100 % is null. */
export function percentToBps(text: string): number | null {
  const bps = scaled(text, 2);
  return bps === null || bps > 10_000n ? null : Number(bps);
}

/** Basis points as the text of a percentage field: 2050 → "20.5". */
export function bpsToPercentInput(bps: number): string {
  const whole = Math.trunc(bps / 100);
  const rest = bps % 100;
  return rest === 0 ? String(whole) : `${whole}.${String(rest).padStart(2, '0').replace(/0$/, '')}`;
}
