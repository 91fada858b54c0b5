import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../api/client';

export type License = Schemas['CustomerPortalLicense'];
export type Device = License['activations'][number];
export type Order = Schemas['CustomerPortalOrder'];
export type Download = Schemas['CustomerPortalDownload'];

/** Seats change when a plugin activates elsewhere: the licenses page asks again each time it opens. */
export const licensesQuery = queryOptions({
  queryKey: ['licenses'],
  queryFn: async () => (await unwrap(api.GET('/api/customer-portal/licenses'))).rows,
  staleTime: 0,
});

export const downloadsQuery = queryOptions({
  queryKey: ['downloads'],
  queryFn: async () => (await unwrap(api.GET('/api/customer-portal/downloads'))).rows,
});

export const ORDERS_PER_PAGE = 20;

/** One page of the buyer's orders, paged by the server; the previous page stays shown while the next loads. */
export const ordersQuery = (page: number) =>
  queryOptions({
    queryKey: ['orders', page],
    queryFn: () => unwrap(api.GET('/api/customer-portal/orders', { params: { query: { page, limit: ORDERS_PER_PAGE } } })),
    placeholderData: keepPreviousData,
  });

export const orderQuery = (orderId: number) =>
  queryOptions({
    queryKey: ['orders', 'one', orderId],
    queryFn: () => unwrap(api.GET('/api/customer-portal/orders/{orderId}', { params: { path: { orderId } } })),
  });
