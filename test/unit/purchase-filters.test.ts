import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/http/errors.js';
import { parsePurchaseFilter } from '../../src/modules/purchases/purchases.filters.js';

const NOW = new Date('2026-03-15T12:00:00.000Z');
const parse = (query: Record<string, unknown>) => parsePurchaseFilter(query as never, NOW);

function failure(query: Record<string, unknown>): AppError {
  try {
    parse(query);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('parsePurchaseFilter', () => {
  it('is empty for an empty query', () => {
    expect(parse({})).toEqual({
      search: undefined,
      productIds: undefined,
      channels: undefined,
      providers: undefined,
      resellerId: undefined,
      refundStatuses: undefined,
      recordTypes: undefined,
      from: null,
      to: null,
    });
  });

  it.each([
    ['comma lists, without duplicates', { channel: 'import,manual_grant,import' }, { channels: ['import', 'manual_grant'] }],
    ['providers in lower case', { provider: 'Card-Provider,gumroad' }, { providers: ['card-provider', 'gumroad'] }],
    ['product ids as numbers', { productIds: '3,1' }, { productIds: [3, 1] }],
    ['productId and productIds as an intersection', { productIds: '3,1', productId: 1 }, { productIds: [1] }],
    ['a disjoint productId and productIds as no product', { productIds: '3', productId: 1 }, { productIds: [] }],
    ['productId alone', { productId: 7 }, { productIds: [7] }],
    ['a reseller id', { resellerId: '12' }, { resellerId: 12 }],
    ['direct sales only', { resellerId: 'none' }, { resellerId: 'none' }],
    ['a trimmed search', { search: '  ann ' }, { search: 'ann' }],
    ['a blank search as none', { search: '   ' }, { search: undefined }],
  ])('reads %s', (_label, query, expected) => {
    expect(parse(query)).toMatchObject(expected);
  });

  it.each([
    ['a day dateFrom as the start of that UTC day', { dateFrom: '2025-01-31' }, '2025-01-31T00:00:00.000Z', null],
    ['a day dateTo as inclusive of the whole day', { dateTo: '2025-01-31' }, null, '2025-02-01T00:00:00.000Z'],
    ['a date-time dateTo as inclusive of that instant', { dateTo: '2025-01-31T10:00:00Z' }, null, '2025-01-31T10:00:00.001Z'],
    ['an offset date-time', { dateFrom: '2025-01-31T10:00:00+02:00' }, '2025-01-31T08:00:00.000Z', null],
    ['dateRange and dateFrom as the later start', { dateRange: '30d', dateFrom: '2026-03-01' }, '2026-03-01T00:00:00.000Z', null],
    ['dateRange and dateFrom as the later start (range later)', { dateRange: '7d', dateFrom: '2026-03-01' }, '2026-03-08T12:00:00.000Z', null],
    ['a range and dateTo as the earlier end', { dateRange: '2025-01-01..2025-12-31', dateTo: '2025-06-30' }, '2025-01-01T00:00:00.000Z', '2025-07-01T00:00:00.000Z'],
  ])('reads %s', (_label, query, from, to) => {
    const filter = parse(query);
    expect(filter.from?.toISOString() ?? null).toBe(from);
    expect(filter.to?.toISOString() ?? null).toBe(to);
  });

  it.each([
    ['a calendar-invalid day', { dateFrom: '2026-02-30' }, 'dateFrom'],
    ['a calendar-invalid date-time', { dateTo: '2026-02-30T10:00:00Z' }, 'dateTo'],
    ['an impossible hour', { dateFrom: '2026-02-01T25:00:00Z' }, 'dateFrom'],
    ['dateTo before dateFrom', { dateFrom: '2026-02-02', dateTo: '2026-02-01' }, 'dateTo'],
    ['a product id beyond int4', { productIds: '9999999999' }, 'productIds'],
    ['a reseller id beyond int4', { resellerId: '9999999999' }, 'resellerId'],
  ])('refuses %s with INVALID_FILTER', (_label, query, parameter) => {
    const error = failure(query);
    expect(error.code).toBe('INVALID_FILTER');
    expect(error.status).toBe(400);
    expect(error.extra.errors).toEqual([{ path: `querystring/${parameter}`, message: expect.any(String) }]);
  });
});
