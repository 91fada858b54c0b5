import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { ensureProgramsEnabled } from '../partners/index.js';
import { developerAccounting, recipientAccounting, recipientEntries } from './accounting.service.js';
import { AccountingQuery, DeveloperAccounting, PreviewAnswer, PreviewBody, RecipientAccounting, RecipientEntries, RecipientEntriesQuery } from './ledger.schemas.js';
import { previewSplit } from './preview.service.js';

const view = { auth: 'account', permission: 'partners.view', allProducts: true } as const;

export const ledgerRoutes = ({ db }: { db: Db }) => [
  defineRoute({
    method: 'POST',
    url: '/api/developer/partners/programs/preview',
    policy: view,
    schema: {
      tags: ['partner programs'],
      summary: 'Preview how a sale would be split (writes nothing, pays nothing)',
      description:
        'Managed checkout (`collection_provider` absent or `managed`): the platform takes 10% of proceeds (subtotal − discount), partner rates apply to the rest, the developer receives the residual; a `platform_fee_cents` other than the computed share, or a `processing_fee_cents` other than 0, is refused naming the expected value. Any other `collection_provider` is an external or historical basis: its fees are taken as given and partner shares are unfunded estimates.',
      body: PreviewBody,
      response: { 200: PreviewAnswer, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: async ({ request, scope }) => {
      await ensureProgramsEnabled(db, scope);
      return previewSplit(db, scope, request.body);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/developer/partners/programs/accounting',
    policy: view,
    schema: {
      tags: ['partner programs'],
      summary: 'Partner money of the workspace: balances per party, allocations, reversals, destinations and transfers',
      description: 'Every balance is a sum of ledger entries. `allocations` and `reversals` are paged with `page` and `pageSize`; transfers are the newest 100.',
      querystring: AccountingQuery,
      response: { 200: DeveloperAccounting, ...errorResponses(400, 401, 403, 404) },
    },
    handler: async ({ request, scope }) => {
      await ensureProgramsEnabled(db, scope);
      return developerAccounting(db, scope, { page: request.query.page ?? 1, pageSize: request.query.pageSize ?? 50 });
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/partner-portal/programs/accounting',
    policy: { auth: 'recipient' },
    schema: {
      tags: ['partner portal: programs'],
      summary: 'The signed-in partner’s own balances and transfer history across workspaces',
      description: 'External (reseller or store) amounts are unfunded estimates and never payable.',
      response: { 200: RecipientAccounting, ...errorResponses(401) },
    },
    handler: ({ recipient }) => recipientAccounting(db, recipient),
  }),
  defineRoute({
    method: 'GET',
    url: '/api/partner-portal/programs/accounting/entries',
    policy: { auth: 'recipient' },
    schema: {
      tags: ['partner portal: programs'],
      summary: 'The signed-in partner’s allocation and reversal rows, paged',
      description:
        'One row per sale split and agreement of the partner, newest first: the product, the sale’s proceeds and refunds, the partner’s rate, share (`amount_cents`), what refunds took back of it (`reversed_cents`) and the rest (`net_cents`). Never another party’s share, nor who bought. `reversals=true` keeps only rows a refund reversed; `currency` only sales in that currency; `agreement_id` narrows to one agreement of the partner (another’s answers 404 `NOT_FOUND`). Paged with `page` and `pageSize` (50, at most 200). External (reseller or store) rows are unfunded estimates (`funded: false`), never payable.',
      querystring: RecipientEntriesQuery,
      response: { 200: RecipientEntries, ...errorResponses(400, 401, 404) },
    },
    handler: ({ request, recipient }) =>
      recipientEntries(db, recipient, { page: request.query.page ?? 1, pageSize: request.query.pageSize ?? 50, agreementId: request.query.agreement_id, reversals: request.query.reversals, currency: request.query.currency }),
  }),
];
