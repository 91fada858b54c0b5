import { AppError, CommonErrors } from './errors.js';

export interface DateWindow {
  from: Date | null;
  /** Exclusive upper bound. */
  to: Date | null;
}

const DAY = 86_400_000;

/**
 * Where a window bound is a date both JavaScript and PostgreSQL read alike: the years 0001-9999
 * (year 0000 parses in JavaScript only; a later year is written `+010000-…`, which PostgreSQL
 * refuses). An upper bound past 9999 bounds nothing, so it is null; anything else out of range
 * is the caller's mistake.
 */
export function storableBound(date: Date, upper: boolean): Date | null | 'out of range' {
  const year = date.getUTCFullYear();
  if (upper && year > 9999) return null;
  return year >= 1 && year <= 9999 ? date : 'out of range';
}

function parseDay(text: string): Date {
  const date = new Date(`${text}T00:00:00.000Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text || storableBound(date, false) !== date) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, `dateRange: ${text} is not a calendar date`, {
      errors: [{ path: 'querystring/dateRange', message: `${text} is not a calendar date` }],
    });
  }
  return date;
}

/**
 * `7d|30d|90d|365d` are rolling windows ending now; `all` (or nothing) is no
 * window; `YYYY-MM-DD..YYYY-MM-DD` is an inclusive UTC day range, either side
 * optional.
 */
export function parseDateRange(value: string | undefined, now = new Date()): DateWindow {
  if (!value || value === 'all') return { from: null, to: null };
  const rolling = /^(\d+)d$/.exec(value);
  if (rolling) return { from: new Date(now.getTime() - Number(rolling[1]) * DAY), to: null };
  const [fromText = '', toText = ''] = value.split('..');
  const from = fromText ? parseDay(fromText) : null;
  const to = toText ? (storableBound(new Date(parseDay(toText).getTime() + DAY), true) as Date | null) : null;
  if (from && to && from >= to) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, 'dateRange: the start is after the end', {
      errors: [{ path: 'querystring/dateRange', message: 'the start is after the end' }],
    });
  }
  return { from, to };
}
