import { AppError } from '../../platform/http/errors.js';
import { parseDateRange, storableBound } from '../../platform/http/date-range.js';
import type { PurchaseChannel, PurchaseRecordType, RefundStatus } from '../../platform/db/schema.js';
import { PurchaseErrors } from './purchases.errors.js';
import type { PurchaseListQuery } from './purchases.schemas.js';

export interface PurchaseFilter {
  search?: string | undefined;
  /** Requested products (productId ∩ productIds); undefined = no product filter. Scope is applied separately. */
  productIds?: number[] | undefined;
  channels?: PurchaseChannel[] | undefined;
  providers?: string[] | undefined;
  resellerId?: number | 'none' | undefined;
  refundStatuses?: RefundStatus[] | undefined;
  recordTypes?: PurchaseRecordType[] | undefined;
  from: Date | null;
  /** Exclusive upper bound. */
  to: Date | null;
}

const DAY = 86_400_000;
const list = (value: string | undefined) => (value ? [...new Set(value.split(',').map((v) => v.trim()).filter(Boolean))] : undefined);

function invalid(parameter: string, message: string): AppError {
  return new AppError(PurchaseErrors.INVALID_FILTER, `${parameter}: ${message}`, { errors: [{ path: `querystring/${parameter}`, message }] });
}

/** A calendar day or an instant; `endOfDay` turns a day into the start of the next one (for inclusive upper bounds). */
function parseInstant(parameter: string, text: string, endOfDay: boolean): Date | null {
  const bound = (date: Date) => {
    const checked = storableBound(date, endOfDay);
    if (checked === 'out of range') throw invalid(parameter, `${text} is outside the years 0001 to 9999`);
    return checked;
  };
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const day = new Date(`${text}T00:00:00.000Z`);
    if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text) throw invalid(parameter, `${text} is not a calendar date`);
    return bound(endOfDay ? new Date(day.getTime() + DAY) : day);
  }
  const dayPart = text.slice(0, 10);
  const day = new Date(`${dayPart}T00:00:00.000Z`);
  const instant = new Date(text);
  if (Number.isNaN(instant.getTime()) || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== dayPart) {
    throw invalid(parameter, `${text} is not a valid date-time`);
  }
  // An inclusive instant bound becomes an exclusive one a millisecond later.
  return bound(endOfDay ? new Date(instant.getTime() + 1) : instant);
}

const later = (a: Date | null, b: Date | null) => (a && b ? (a > b ? a : b) : (a ?? b));
const earlier = (a: Date | null, b: Date | null) => (a && b ? (a < b ? a : b) : (a ?? b));

/** Turns the query string into a filter; syntax was checked by the schema, meaning is checked here. */
export function parsePurchaseFilter(query: PurchaseListQuery, now = new Date()): PurchaseFilter {
  const window = parseDateRange(query.dateRange, now);
  const from = query.dateFrom ? parseInstant('dateFrom', query.dateFrom, false) : null;
  const to = query.dateTo ? parseInstant('dateTo', query.dateTo, true) : null;
  if (from && to && from >= to) throw invalid('dateTo', 'dateTo is before dateFrom');

  let productIds = list(query.productIds)?.map(Number);
  if (productIds?.some((id) => id > 2147483647)) throw invalid('productIds', 'product ids are at most 2147483647');
  if (query.productId !== undefined) productIds = productIds ? productIds.filter((id) => id === query.productId) : [query.productId];

  let resellerId: number | 'none' | undefined;
  if (query.resellerId === 'none') resellerId = 'none';
  else if (query.resellerId !== undefined) {
    resellerId = Number(query.resellerId);
    if (resellerId > 2147483647) throw invalid('resellerId', 'must be at most 2147483647');
  }

  return {
    search: query.search?.trim() || undefined,
    productIds,
    channels: list(query.channel) as PurchaseChannel[] | undefined,
    providers: list(query.provider?.toLowerCase()),
    resellerId,
    refundStatuses: list(query.refundStatus) as RefundStatus[] | undefined,
    recordTypes: list(query.recordType) as PurchaseRecordType[] | undefined,
    from: later(window.from, from),
    to: earlier(window.to, to),
  };
}
