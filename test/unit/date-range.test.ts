import { describe, expect, it } from 'vitest';
import { parseDateRange } from '../../src/platform/http/date-range.js';
import { AppError, CommonErrors } from '../../src/platform/http/errors.js';

const NOW = new Date('2026-03-15T12:34:56.000Z');
const DAY = 86_400_000;
const at = (iso: string) => new Date(iso);

function failureOf(value: string): AppError {
  try {
    parseDateRange(value, NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error(`parseDateRange accepted ${value}`);
}

describe('parseDateRange', () => {
  it.each([
    { label: 'nothing', value: undefined },
    { label: 'an empty string', value: '' },
    { label: 'all', value: 'all' },
    { label: 'two open sides', value: '..' },
  ])('gives no window for $label', ({ value }) => {
    expect(parseDateRange(value, NOW)).toEqual({ from: null, to: null });
  });

  it.each([
    { value: '7d', days: 7 },
    { value: '30d', days: 30 },
    { value: '90d', days: 90 },
    { value: '365d', days: 365 },
  ])('$value is a rolling window of $days days ending now', ({ value, days }) => {
    expect(parseDateRange(value, NOW)).toEqual({ from: new Date(NOW.getTime() - days * DAY), to: null });
  });

  it('uses the current time when no clock is given', () => {
    const before = Date.now();
    const { from } = parseDateRange('7d');
    expect(from!.getTime()).toBeGreaterThanOrEqual(before - 7 * DAY);
    expect(from!.getTime()).toBeLessThanOrEqual(Date.now() - 7 * DAY);
  });

  it.each([
    {
      label: 'a closed range includes the whole end day',
      value: '2026-01-01..2026-01-31',
      window: { from: at('2026-01-01T00:00:00.000Z'), to: at('2026-02-01T00:00:00.000Z') },
    },
    {
      label: 'a one-day range',
      value: '2026-02-28..2026-02-28',
      window: { from: at('2026-02-28T00:00:00.000Z'), to: at('2026-03-01T00:00:00.000Z') },
    },
    {
      label: 'a range over a leap day',
      value: '2028-02-29..2028-02-29',
      window: { from: at('2028-02-29T00:00:00.000Z'), to: at('2028-03-01T00:00:00.000Z') },
    },
    {
      label: 'a range over the new year',
      value: '2025-12-31..2025-12-31',
      window: { from: at('2025-12-31T00:00:00.000Z'), to: at('2026-01-01T00:00:00.000Z') },
    },
    { label: 'an open end', value: '2026-01-01..', window: { from: at('2026-01-01T00:00:00.000Z'), to: null } },
    { label: 'an open start', value: '..2026-01-31', window: { from: null, to: at('2026-02-01T00:00:00.000Z') } },
  ])('$label', ({ value, window }) => {
    expect(parseDateRange(value, NOW)).toEqual(window);
  });

  it.each([
    { label: 'February 31st', value: '2026-02-31..2026-03-01', day: '2026-02-31' },
    { label: 'February 29th of a common year', value: '2026-01-01..2026-02-29', day: '2026-02-29' },
    { label: 'month 13', value: '2026-13-01..', day: '2026-13-01' },
    { label: 'day 00', value: '..2026-01-00', day: '2026-01-00' },
    { label: 'April 31st at the end', value: '2026-04-01..2026-04-31', day: '2026-04-31' },
  ])('rejects $label as VALIDATION_FAILED', ({ value, day }) => {
    const error = failureOf(value);
    expect(error.code).toBe(CommonErrors.VALIDATION_FAILED);
    expect(error.status).toBe(400);
    expect(error.message).toBe(`dateRange: ${day} is not a calendar date`);
    expect(error.extra.errors).toEqual([{ path: 'querystring/dateRange', message: `${day} is not a calendar date` }]);
  });

  it('rejects a start after the end', () => {
    const error = failureOf('2026-02-02..2026-02-01');
    expect(error.code).toBe(CommonErrors.VALIDATION_FAILED);
    expect(error.message).toBe('dateRange: the start is after the end');
    expect(error.extra.errors).toEqual([{ path: 'querystring/dateRange', message: 'the start is after the end' }]);
  });
});
