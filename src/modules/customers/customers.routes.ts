import type pg from 'pg';
import { defineRoute } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { sendJsonText } from '../../platform/http/json-text.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../platform/import/errors.js';
import { importExportRoutes } from '../../platform/import/import-routes.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import {
  CustomerIdParams,
  CustomerImportJson,
  CustomerImportMultipart,
  CustomerList,
  CustomerListQuery,
  RemoveCustomerBody,
  RemoveCustomerResult,
} from './customers.schemas.js';
import * as service from './customers.service.js';

const tags = ['customers'];

export function customerRoutes({ db, runner, pool }: { db: Db; runner: ImportRunner; pool?: pg.Pool | undefined }) {
  const csv = importExportRoutes(
    { db, runner, pool },
    {
      kind: 'customers',
      prefix: '/api/developer/customers',
      tags,
      permissions: { view: 'customers.view', manage: 'customers.manage' },
      export: {
        summary: 'Export customers as CSV',
        description: `Every matching row (not one page), streamed. Columns: ${service.EXPORT_COLUMNS.join(', ')}. Cells that begin with = + - @ or a tab are prefixed with a single quote.`,
        querystring: CustomerListQuery,
        rows: service.exportCustomers,
        copy: { header: service.EXPORT_COLUMNS, query: service.exportCustomersQuery },
      },
      template: {
        summary: 'Customer import template',
        description: 'Columns match the import; the file imports unchanged.',
        rows: service.importTemplate,
      },
      import: {
        summary: 'Import customers',
        description:
          `JSON \`customers\` array or multipart \`file\` (CSV), plus \`productMappings\`. At most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES} bytes (413 beyond). ` +
          'Existing customers (same e-mail) are updated, not duplicated. 201: every row accepted. 207: the valid rows were committed and `errors` lists the others (`row` is the 1-based data row); resend only those. 422: no row was valid, nothing was written.',
        json: CustomerImportJson,
        multipart: CustomerImportMultipart,
        run: service.importCustomers,
        writes: ['accounts', 'developer_customers', 'customer_products', 'marketing_consents'],
      },
    },
  );

  return [
    defineRoute({
      method: 'GET',
      url: '/api/developer/customers',
      policy: { auth: 'account', permission: 'customers.view' },
      schema: {
        tags,
        summary: 'List customers',
        description: 'Newest relationship first. `productId` narrows within the caller’s product scope; it never widens it.',
        querystring: CustomerListQuery,
        response: { 200: CustomerList, ...errorResponses(400, 401, 403) },
      },
      handler: async ({ request, reply, scope }) => sendJsonText(reply, await service.listCustomers(db, scope, request.query)),
    }),
    csv.export,
    csv.template,
    csv.import,
    defineRoute({
      method: 'DELETE',
      url: '/api/developer/customers/:customerId',
      policy: { auth: 'account', permission: null, recordPermission: 'customers.manage' },
      schema: {
        tags,
        summary: 'Remove a customer relationship',
        description:
          'Requires `confirm: true` or `confirmation: "yes"` (400 CONFIRMATION_REQUIRED otherwise). Removes the relationship and its marketing records; keeps the global account, purchases and financial records. Repeating the call answers `alreadyRemoved: true`.',
        params: CustomerIdParams,
        body: RemoveCustomerBody,
        response: { 200: RemoveCustomerResult, ...errorResponses(400, 401, 403, 404) },
      },
      handler: ({ request, scope, record }) => service.removeCustomer(db, scope, record, request.params.customerId, request.body ?? undefined),
    }),
  ];
}
