import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { ChangeWorkspaceSettings, WorkspaceSettings } from './settings.schemas.js';
import { changeSettings, readSettings } from './settings.service.js';

const tags = ['console: workspace'];

export const settingsRoutes = ({ db, publicBaseUrl }: { db: Db; publicBaseUrl: string }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/workspace',
    policy: { auth: 'account', permission: null },
    schema: {
      tags,
      summary: 'The workspace’s settings',
      description: 'The selected workspace’s name, storefront URL, whether partner programs are on, and the buyers’ portal address to share with buyers. Every member may read them.',
      response: { 200: WorkspaceSettings, ...errorResponses(400, 401, 403) },
    },
    handler: ({ scope }) => readSettings(db, scope, publicBaseUrl),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/developer/workspace',
    policy: { auth: 'account', permission: 'workspace.manage' },
    schema: {
      tags,
      summary: 'Change the workspace’s settings',
      description:
        'Changes the fields sent (`storefront_url: null` removes it). Turning partner programs on or off also needs `partners.manage` (403 otherwise): off closes the programs, their referral links and accounting for the workspace, and keeps the agreements. `keep_serials_on_refund` decides whether a full refund revokes the serial sold with the item (off, the default) or leaves it active; it applies to refunds reported from then on. Audited.',
      body: ChangeWorkspaceSettings,
      response: { 200: WorkspaceSettings, ...errorResponses(400, 401, 403) },
    },
    handler: ({ request, scope }) => changeSettings(db, scope, request.body, publicBaseUrl),
  }),
];
