import { queryOptions } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../api/client';
import { programView } from './model';

/**
 * The recipient's programs. A 401 here means "signed out", which pages handle themselves
 * (`anonymous`): the invitation page shows a sign-in offer, the layout a redirect.
 */
export const programsQuery = queryOptions({
  queryKey: ['programs'],
  queryFn: async () => (await unwrap(api.GET('/api/partner-portal/programs'))).programs.map(programView),
  meta: { anonymous: true },
  retry: false,
});

/** Balances move with every sale, refund and payout run: a page that shows them asks again each time it opens. */
export const accountingQuery = queryOptions({
  queryKey: ['accounting'],
  queryFn: () => unwrap(api.GET('/api/partner-portal/programs/accounting')),
  staleTime: 0,
});

export type Accounting = paths['/api/partner-portal/programs/accounting']['get']['responses'][200]['content']['application/json'];

export interface EntriesParams {
  page: number;
  agreement: string;
  currency: string;
  reversals: boolean;
}

export const ENTRIES_PER_PAGE = 25;

/** The partner's own allocation (or only reversal) rows, one page of them, paged by the server. */
export const entriesQuery = (params: EntriesParams) =>
  queryOptions({
    queryKey: ['accounting', 'entries', params],
    queryFn: () =>
      unwrap(
        api.GET('/api/partner-portal/programs/accounting/entries', {
          params: {
            query: {
              page: params.page,
              pageSize: ENTRIES_PER_PAGE,
              ...(params.agreement ? { agreement_id: Number(params.agreement) } : {}),
              ...(params.reversals ? { reversals: true } : {}),
              ...(params.currency ? { currency: params.currency } : {}),
            },
          },
        }),
      ),
    staleTime: 0,
  });

export type Entries = paths['/api/partner-portal/programs/accounting/entries']['get']['responses'][200]['content']['application/json'];

/** A referral link's visits per day (the last 30) and in total; counts only. */
export const visitsQuery = (agreementId: number) =>
  queryOptions({
    queryKey: ['visits', agreementId],
    queryFn: () => unwrap(api.GET('/api/partner-portal/programs/{id}/referral-visits', { params: { path: { id: agreementId } } })),
    staleTime: 0,
  });

export type Visits = paths['/api/partner-portal/programs/{id}/referral-visits']['get']['responses'][200]['content']['application/json'];
