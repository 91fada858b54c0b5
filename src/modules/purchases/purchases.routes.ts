import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { sendJsonText } from '../../platform/http/json-text.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../platform/import/errors.js';
import { importExportRoutes } from '../../platform/import/import-routes.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import { grantAccess } from './purchases.grants.js';
import { importPurchases } from './purchases.importer.js';
import {
  FilterOptions,
  ManualGrantBody,
  ManualGrantResult,
  PurchaseImportJson,
  PurchaseImportMultipart,
  PurchaseList,
  PurchaseListQuery,
} from './purchases.schemas.js';
import * as service from './purchases.service.js';

const tags = ['purchases'];
const view = { auth: 'account', permission: 'purchases.view' } as const;

export function purchaseRoutes({ db, runner }: { db: Db; runner: ImportRunner }) {
  const csv = importExportRoutes(
    { db, runner },
    {
      kind: 'purchases',
      prefix: '/api/developer/purchases',
      tags,
      permissions: { view: 'purchases.view', manage: 'purchases.manage' },
      export: {
        summary: 'Export purchases as CSV',
        description: `Every matching row (same filters as the list), streamed. Columns: ${service.PURCHASE_EXPORT_COLUMNS.join(', ')}. Amounts in major units. Cells that begin with = + - @ or a tab are prefixed with a single quote.`,
        querystring: PurchaseListQuery,
        rows: service.exportPurchases,
      },
      template: {
        summary: 'Purchase import template',
        description: 'Columns match the import; the file imports unchanged (and a second time creates nothing new).',
        rows: service.purchaseTemplate,
      },
      import: {
        summary: 'Import historical or external purchases',
        description:
          `JSON \`purchases\` array or multipart \`file\` (CSV), plus \`productMappings\`. At most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES} bytes (413 beyond). ` +
          'Creates customers, orders, items and entitlements marked as imported; assigns `serialCode` (creating it as imported if new). Sends no e-mail and records no marketing consent; collects no payment. ' +
          'Re-importing the same rows creates nothing twice (natural key: externalReference + product + customer; rows without externalReference get one derived from their content). ' +
          'A row whose purchase already exists changes nothing, not even its serial. ' +
          '201: every row accepted. 207: the valid rows were committed and `errors` lists the others; resend only those. 422: no row was valid, nothing was written. 409 SERIALIZATION_FAILURE: a serial named in the file changed hands while the import ran; nothing was written, retry.',
        json: PurchaseImportJson,
        multipart: PurchaseImportMultipart,
        errors: [409],
        run: importPurchases,
        writes: ['orders', 'order_items', 'entitlements', 'accounts', 'developer_customers', 'customer_products', 'serials', 'serial_events'],
      },
    },
  );

  return [
    defineRoute({
      method: 'GET',
      url: '/api/developer/purchases',
      policy: view,
      schema: {
        tags,
        summary: 'List purchases',
        description:
          'One row per order item, newest purchase first. Every filter narrows within your workspace and assigned products; list filters take comma-separated values. Nothing here collects money, refunds or authorises billing.',
        querystring: PurchaseListQuery,
        response: { 200: PurchaseList, ...errorResponses(400, 401, 403) },
      },
      handler: async ({ request, reply, scope }) => sendJsonText(reply, await service.listPurchases(db, scope, request.query)),
    }),
    csv.export,
    csv.template,
    defineRoute({
      method: 'GET',
      url: '/api/developer/purchases/filter-options',
      policy: view,
      schema: {
        tags,
        summary: 'Values for the purchase filters',
        description: 'Only the products you are assigned to, and the resellers you can see (a product-scoped member sees resellers with sales of their products).',
        response: { 200: FilterOptions, ...errorResponses(401, 403) },
      },
      handler: ({ scope }) => service.filterOptions(db, scope),
    }),
    csv.import,
    defineRoute({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      policy: { auth: 'account', permission: 'purchases.manage' },
      schema: {
        tags,
        summary: 'Grant product access without payment',
        description:
          'Choose products (`productId` or `productIds`) and the customer (`customerId`, or `email` to find or create them). `reason` is required and kept with `grantRequestId` for reconciliation. ' +
          'grantType: `perpetual` (default; a new serial per product), `subscription` (one product, access until `accessUntil`, default one year; authorises no recurring charge), `existing_serial` (one product; assigns the available serial `serialId`). ' +
          'Products the customer is already entitled to are skipped. `grantRequestId` makes the call idempotent: a repeat with the same body answers the first result again (header `Idempotent-Replayed: true`), a different body answers 409 GRANT_REQUEST_CONFLICT. ' +
          '`sendProductPurchaseEmails` queues one e-mail per granted product, sent after commit. Never charges, refunds or authorises billing.',
        body: ManualGrantBody,
        response: { 201: ManualGrantResult, ...errorResponses(400, 401, 403, 404, 409) },
      },
      handler: async ({ request, reply, scope }) => {
        const outcome = await grantAccess(db, scope, request.body);
        if (outcome.replayed) reply.header('idempotent-replayed', 'true');
        return reply.code(201).send(outcome.body);
      },
    }),
  ];
}
