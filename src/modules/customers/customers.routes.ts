import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireScope } from '../../platform/auth/policy.js';
import type { Db } from '../../platform/db/database.js';
import { CsvBody, datedFilename, sendCsv } from '../../platform/http/csv-reply.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS } from '../../platform/import/errors.js';
import { multipartBodyPlaceholder } from '../../platform/import/import-request.js';
import {
  CustomerIdParams,
  CustomerImportJson,
  CustomerImportMultipart,
  CustomerList,
  CustomerListQuery,
  ImportResult,
  RemoveCustomerBody,
  RemoveCustomerResult,
} from './customers.schemas.js';
import * as service from './customers.service.js';

const tags = ['customers'];

export const customerRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  app.imports.define({ kind: 'customers', arrayField: 'customers', permission: 'customers.manage', run: service.importCustomers });

  app.get(
    '/api/developer/customers',
    {
      config: { policy: { auth: 'account', permission: 'customers.view' } },
      schema: {
        tags,
        summary: 'List customers',
        description: 'Newest relationship first. `productId` narrows within the caller’s product scope; it never widens it.',
        querystring: CustomerListQuery,
        response: { 200: CustomerList, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => service.listCustomers(db, requireScope(request), request.query),
  );

  app.get(
    '/api/developer/customers/export',
    {
      config: { policy: { auth: 'account', permission: 'customers.view' } },
      schema: {
        tags,
        summary: 'Export customers as CSV',
        description: `Every matching row (not one page), streamed. Columns: ${service.EXPORT_COLUMNS.join(', ')}. Cells that begin with = + - @ or a tab are prefixed with a single quote.`,
        querystring: CustomerListQuery,
        produces: ['text/csv'],
        response: { 200: CsvBody, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const stream = service.exportCustomers(db, requireScope(request), request.query);
      return sendCsv(reply, datedFilename('customers'), stream);
    },
  );

  app.get(
    '/api/developer/customers/demo-csv',
    {
      config: { policy: { auth: 'account', permission: 'customers.view' } },
      schema: {
        tags,
        summary: 'Customer import template',
        description: 'Columns match the import; the file imports unchanged.',
        produces: ['text/csv'],
        response: { 200: CsvBody, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => sendCsv(reply, 'customers-template.csv', await service.importTemplate(db, requireScope(request))),
  );

  app.post(
    '/api/developer/customers/import',
    {
      bodyLimit: IMPORT_MAX_BYTES,
      preValidation: multipartBodyPlaceholder,
      config: { policy: { auth: 'account', permission: 'customers.manage' } },
      schema: {
        tags,
        summary: 'Import customers',
        description:
          `JSON \`customers\` array or multipart \`file\` (CSV), plus \`productMappings\`. At most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES} bytes (413 beyond). ` +
          'Existing customers (same e-mail) are updated, not duplicated. 201: every row accepted. 207: the valid rows were committed and `errors` lists the others (`row` is the 1-based data row); resend only those. 422: no row was valid, nothing was written.',
        body: {
          content: {
            'application/json': { schema: CustomerImportJson },
            'multipart/form-data': { schema: CustomerImportMultipart },
          },
        } as unknown as typeof CustomerImportJson,
        response: { 201: ImportResult, 207: ImportResult, ...errorResponses(400, 401, 403, 413, 415, 422) },
      },
    },
    async (request, reply) => app.imports.handle(request, reply, 'customers'),
  );

  app.delete(
    '/api/developer/customers/:customerId',
    {
      config: { policy: { auth: 'account', permission: null, recordPermission: 'customers.manage' } },
      schema: {
        tags,
        summary: 'Remove a customer relationship',
        description:
          'Requires `confirm: true` or `confirmation: "yes"` (400 CONFIRMATION_REQUIRED otherwise). Removes the relationship and its marketing records; keeps the global account, purchases and financial records. Repeating the call answers `alreadyRemoved: true`.',
        params: CustomerIdParams,
        body: RemoveCustomerBody,
        response: { 200: RemoveCustomerResult, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => service.removeCustomer(db, requireScope(request), request.params.customerId, request.body ?? undefined),
  );
};
