import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { sendJsonText } from '../../platform/http/json-text.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { IMPORT_MAX_ROWS } from '../../platform/import/errors.js';
import { importExportRoutes } from '../../platform/import/import-routes.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import { LIFECYCLE_TABLE, SERIAL_ACTIONS } from './serials.lifecycle.js';
import {
  ActionBody,
  ActionResult,
  ActivationList,
  ActivationListQuery,
  ActivationParams,
  AvailableByProduct,
  AvailableQuery,
  GenerateBody,
  GenerateResult,
  MAX_GENERATE_QUANTITY,
  PortalOrderResult,
  ReleaseBody,
  ReleaseResult,
  ResellerList,
  SerialEventList,
  SerialEventsQuery,
  SerialIdParams,
  SerialImportJson,
  SerialImportMultipart,
  SerialList,
  SerialListQuery,
} from './serials.schemas.js';
import * as service from './serials.service.js';
import * as seats from './serials.seats.js';

const tags = ['serials'];
const view = { auth: 'account', permission: 'serials.view' } as const;
const manage = { auth: 'account', permission: 'serials.manage' } as const;
const viewRecord = { auth: 'account', permission: null, recordPermission: 'serials.view' } as const;
const manageRecord = { auth: 'account', permission: null, recordPermission: 'serials.manage' } as const;

/** RFC 9745 / RFC 8594 headers of the deprecated /api/serials handlers. */
const DEPRECATED_SINCE = Date.UTC(2026, 10, 1) / 1000;
const SUNSET = 'Mon, 01 Nov 2027 00:00:00 GMT';

export function serialRoutes({ db, runner }: { db: Db; runner: ImportRunner }) {
  const csv = importExportRoutes(
    { db, runner },
    {
      kind: 'serials',
      prefix: '/api/developer/serials',
      tags,
      permissions: { view: 'serials.view', manage: 'serials.manage' },
      export: {
        summary: 'Export serials as CSV',
        description: `Every matching row, streamed. Columns: ${service.SERIAL_EXPORT_COLUMNS.join(', ')}. Formula-like cells are prefixed with a quote.`,
        querystring: SerialListQuery,
        rows: service.exportSerials,
      },
      template: {
        summary: 'Serial import template',
        description: 'Columns match the import; the example codes are fresh, so the file imports unchanged.',
        rows: service.serialTemplate,
      },
      import: {
        summary: 'Import serials',
        description:
          `JSON \`serials\` array or multipart CSV \`file\`, plus \`productMappings\`. At most ${IMPORT_MAX_ROWS} rows. ` +
          'Codes already in this workspace are accepted and not duplicated; a code used by another workspace is a row error (SERIAL_CODE_TAKEN). ' +
          'A row with an e-mail assigns the new serial to that customer (creating the customer relationship). 201 / 207 / 422 as for customers.',
        json: SerialImportJson,
        multipart: SerialImportMultipart,
        run: service.importSerials,
        writes: ['serials', 'serial_events'],
      },
    },
  );

  const actions = SERIAL_ACTIONS.map((action) =>
    defineRoute({
      method: 'POST',
      url: `/api/developer/serials/:serialId/${action}`,
      policy: manageRecord,
      schema: {
        tags,
        summary: `${action[0]!.toUpperCase()}${action.slice(1)} a serial`,
        description: `Serial lifecycle:\n\n${LIFECYCLE_TABLE}\n\nSuspended serials keep their devices but fail validation. A disallowed action answers 409 INVALID_SERIAL_TRANSITION with \`currentStatus\` and \`allowedActions\`. Answers the serial and \`deactivatedActivations\`.`,
        params: SerialIdParams,
        body: ActionBody,
        response: { 200: ActionResult, ...errorResponses(400, 401, 403, 404, 409) },
      },
      handler: ({ request, scope, record }) => service.applyAction(db, scope, record, request.params.serialId, action, request.body ?? undefined),
    }),
  );

  const portalOrder = (['hide', 'show'] as const).map((verb) =>
    defineRoute({
      method: 'POST',
      url: `/api/developer/serials/:serialId/customer-portal-order/${verb}`,
      policy: manageRecord,
      schema: {
        tags,
        summary: `${verb === 'hide' ? 'Hide' : 'Show'} the serial's order in the customer portal`,
        description: 'Presentation only: ownership, payment and refund state are unchanged. A serial without an order answers 409 SERIAL_HAS_NO_ORDER.',
        params: SerialIdParams,
        body: ActionBody,
        response: { 200: PortalOrderResult, ...errorResponses(400, 401, 403, 404, 409) },
      },
      handler: ({ request, scope, record }) =>
        service.setPortalVisibility(db, scope, record, request.params.serialId, verb === 'hide', request.body ?? undefined),
    }),
  );

  return [
    defineRoute({
      method: 'GET',
      url: '/api/developer/serials',
      policy: view,
      schema: {
        tags,
        summary: 'List serials',
        description: '`status` filters available (unassigned inventory) or redeemed (in use). Newest first.',
        querystring: SerialListQuery,
        response: { 200: SerialList, ...errorResponses(400, 401, 403) },
      },
      handler: ({ request, scope }) => service.listSerials(db, scope, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/serials',
      policy: view,
      schema: {
        tags,
        summary: 'Deprecated: use GET /api/developer/serials',
        deprecated: true,
        description: `Read-only compatibility alias of the serial list. Answers with Deprecation, Sunset (${SUNSET}) and a Link to the successor.`,
        querystring: SerialListQuery,
        response: { 200: SerialList, ...errorResponses(400, 401, 403) },
      },
      handler: ({ request, reply, scope }) => {
        reply
          .header('deprecation', `@${DEPRECATED_SINCE}`)
          .header('sunset', SUNSET)
          .header('link', '</api/developer/serials>; rel="successor-version"');
        return service.listSerials(db, scope, request.query);
      },
    }),
    csv.export,
    csv.template,
    csv.import,
    defineRoute({
      method: 'GET',
      url: '/api/developer/serials/available-by-product',
      policy: view,
      schema: {
        tags,
        summary: 'Available serial inventory per product',
        description: '`products`: available and total serials per product in scope; `promos`: promo batches running now; `rows`: the available serials, paged.',
        querystring: AvailableQuery,
        response: { 200: AvailableByProduct, ...errorResponses(400, 401, 403) },
      },
      handler: ({ request, scope }) => service.availableByProduct(db, scope, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/developer/serials/resellers',
      policy: view,
      schema: { tags, summary: 'Reseller relationships of the workspace', response: { 200: ResellerList, ...errorResponses(401, 403) } },
      handler: ({ scope }) => service.listResellers(db, scope),
    }),
    defineRoute({
      method: 'POST',
      url: '/api/developer/serials/generate',
      policy: manage,
      schema: {
        tags,
        summary: 'Generate serial inventory',
        description:
          `Creates up to ${MAX_GENERATE_QUANTITY} serials for an owned product in one request. snake_case aliases (product_id, expires_at, promo_price, promo_start, promo_expires, active_from, active_to, batch_tag) are accepted; an alias that disagrees with its camelCase field answers 400 CONFLICTING_ALIASES. ` +
          'promoPrice is in minor units (cents). Reseller assignment answers 400 PARTNER_POOL_REQUIRED; a workspace without billing eligibility 403 BILLING_NOT_ELIGIBLE. Generation never creates a customer, order or ownership.',
        body: GenerateBody,
        response: { 201: GenerateResult, ...errorResponses(400, 401, 403, 404, 409) },
      },
      handler: async ({ request, reply, scope }) => sendJsonText(reply.code(201), await service.generateSerialsJson(db, scope, request.body)),
    }),
    ...actions,
    ...portalOrder,
    defineRoute({
      method: 'GET',
      url: '/api/developer/serials/:serialId/events',
      policy: viewRecord,
      schema: {
        tags,
        summary: 'Audit trail of a serial',
        description: 'Every generation, import, access action, portal visibility change and runtime activation, oldest first.',
        params: SerialIdParams,
        querystring: SerialEventsQuery,
        response: { 200: SerialEventList, ...errorResponses(400, 401, 403, 404) },
      },
      handler: ({ request, scope, record }) => service.listSerialEvents(db, scope, record, request.params.serialId, request.query),
    }),
    defineRoute({
      method: 'GET',
      url: '/api/developer/serials/:serialId/activations',
      policy: viewRecord,
      schema: {
        tags,
        summary: 'Devices (seats) of a serial',
        description:
          'Every machine that activated the serial, newest first: machine id, name, platform, app version, first and last seen, and whether it still holds a seat (`status`: active or released). `last_seen_at` is refreshed by activation and at most hourly by validation.',
        params: SerialIdParams,
        querystring: ActivationListQuery,
        response: { 200: ActivationList, ...errorResponses(400, 401, 403, 404) },
      },
      handler: ({ request, scope, record }) => seats.listActivations(db, scope, record, request.params.serialId, request.query),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/api/developer/serials/:serialId/activations/:activationId',
      policy: manageRecord,
      schema: {
        tags,
        summary: 'Release one seat of a serial',
        description:
          'Frees the seat a machine holds (its next validation answers MACHINE_NOT_ACTIVATED; it may activate again while seats remain). The JSON body names the `reason` (required) and an optional `note`; both go to the serial\'s audit trail with the acting account (`activation.released`). ' +
          'Idempotent: a seat already released answers 200 with `released: false` and changes nothing. An activation of another serial answers 404.',
        params: ActivationParams,
        body: ReleaseBody,
        response: { 200: ReleaseResult, ...errorResponses(400, 401, 403, 404) },
      },
      handler: ({ request, scope, record }) =>
        seats.releaseActivation(db, scope, record, request.params.serialId, request.params.activationId, request.body),
    }),
  ];
}
