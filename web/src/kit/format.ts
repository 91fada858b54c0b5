/**
 * Display formatting. Amounts arrive as integer minor units and are shown without floating point:
 * the integer is split into a decimal string by the currency's digits and Intl formats that string.
 */
import { currencyDigits } from './amounts';

/** "12345" minor units of EUR → "€123.45" (in the reader's locale). */
export function formatMinor(minor: number | bigint, currency: string): string {
  const code = currency.toUpperCase();
  const digits = currencyDigits(code);
  const value = BigInt(minor);
  const negative = value < 0n;
  const text = (negative ? -value : value).toString().padStart(digits + 1, '0');
  const decimal = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: code }).format(`${negative ? '-' : ''}${decimal}` as Intl.StringNumericLiteral);
  } catch {
    return `${negative ? '-' : ''}${decimal} ${code}`;
  }
}

/** Basis points as a percentage: 2050 → "20.5 %". */
export function formatBps(bps: number): string {
  const whole = Math.trunc(bps / 100);
  const rest = Math.abs(bps % 100);
  const decimal = rest === 0 ? String(whole) : `${whole}.${String(rest).padStart(2, '0').replace(/0$/, '')}`;
  return `${new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }).format(decimal as Intl.StringNumericLiteral)} %`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateOnly.format(date);
}

export function formatCount(n: number): string {
  return new Intl.NumberFormat().format(n);
}
