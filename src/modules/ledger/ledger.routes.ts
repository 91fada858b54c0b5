import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireRecipient, requireScope } from '../../platform/auth/policy.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { PartnerPrograms } from '../partners/partners.service.js';
import { developerAccounting, recipientAccounting } from './accounting.service.js';
import { AccountingQuery, DeveloperAccounting, PreviewAnswer, PreviewBody, RecipientAccounting } from './ledger.schemas.js';
import { previewSplit } from './preview.service.js';

const view = { auth: 'account' as const, permission: 'partners.view' as const, allProducts: true };

export const ledgerRoutes: FastifyPluginAsyncTypebox<{ db: Db; programs: PartnerPrograms }> = async (app, { db, programs }) => {
  app.post(
    '/api/developer/partners/programs/preview',
    {
      config: { policy: view },
      schema: {
        tags: ['partner programs'],
        summary: 'Preview how a sale would be split (writes nothing, pays nothing)',
        description:
          'Managed checkout (`collection_provider` absent or `managed`): the platform takes 10% of proceeds (subtotal − discount), partner rates apply to the rest, the developer receives the residual; a `platform_fee_cents` other than the computed share, or a `processing_fee_cents` other than 0, is refused naming the expected value. Any other `collection_provider` is an external or historical basis: its fees are taken as given and partner shares are unfunded estimates.',
        body: PreviewBody,
        response: { 200: PreviewAnswer, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const scope = requireScope(request);
      await programs.ensureEnabled(scope);
      return previewSplit(db, scope, request.body);
    },
  );

  app.get(
    '/api/developer/partners/programs/accounting',
    {
      config: { policy: view },
      schema: {
        tags: ['partner programs'],
        summary: 'Partner money of the workspace: balances per party, allocations, reversals, destinations and transfers',
        description: 'Every balance is a sum of ledger entries. `allocations` and `reversals` are paged with `page` and `pageSize`; transfers are the newest 100.',
        querystring: AccountingQuery,
        response: { 200: DeveloperAccounting, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const scope = requireScope(request);
      await programs.ensureEnabled(scope);
      return developerAccounting(db, scope, { page: request.query.page ?? 1, pageSize: request.query.pageSize ?? 50 });
    },
  );

  app.get(
    '/api/partner-portal/programs/accounting',
    {
      config: { policy: { auth: 'recipient' } },
      schema: {
        tags: ['partner portal: programs'],
        summary: 'The signed-in partner’s own balances and transfer history across workspaces',
        description: 'External (reseller or store) amounts are unfunded estimates and never payable.',
        response: { 200: RecipientAccounting, ...errorResponses(401) },
      },
    },
    async (request) => recipientAccounting(db, requireRecipient(request)),
  );
};
