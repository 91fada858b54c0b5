import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import { ImportIdParams, ImportResource } from './imports.schemas.js';
import { getImport } from './imports.service.js';

export const importRoutes = ({ db, runner }: { db: Db; runner: ImportRunner }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/imports/:importId',
    policy: { auth: 'account', permission: null },
    schema: {
      tags: ['imports'],
      summary: 'An import queued with 202',
      description:
        'Large imports (above the row threshold, or sent with `Prefer: respond-async`) answer 202 with `Location` pointing here. Poll until `state` is `succeeded` (counts and row errors as in a 201/207 answer) or `failed` (nothing was written; `failure` says why). ' +
        'Visible to the member who started it and to all-products members with the view permission of what it imports (`customers.view`, `serials.view` or `purchases.view`); anyone else gets 404.',
      params: ImportIdParams,
      response: { 200: ImportResource, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => getImport(db, runner, scope, request.params.importId),
  }),
];
