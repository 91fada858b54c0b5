import type { Readable } from 'node:stream';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { copyCsv } from '../csv/copy-out.js';
import type { Static, TSchema } from '@sinclair/typebox';
import { defineRoute } from '../auth/define-route.js';
import type { Permission } from '../auth/permissions.js';
import type { Scope } from '../auth/scope.js';
import type { Db } from '../db/database.js';
import type { ImportKind } from '../db/schema.js';
import { CsvBody, datedFilename, sendCsv } from '../http/csv-reply.js';
import { errorResponses } from '../http/schemas.js';
import { IMPORT_MAX_BYTES } from './errors.js';
import { importRowLimit } from './import-bounds.js';
import { multipartBodyPlaceholder } from './import-request.js';
import type { ImportDefinition, ImportRunner } from './import-runner.js';
import { ImportResult } from './import-schemas.js';

// The CSV trio every bulk resource has: its export, its import template and its import. A module
// describes what differs (its kind, path, permissions, texts, rows) and gets the three routes.

interface Documented {
  summary: string;
  description: string;
}

export interface ImportExportDescription<Q extends TSchema> {
  /** The import kind; also the JSON body's array field and the export's file name. */
  kind: ImportKind;
  /** `/api/developer/<resource>`: the routes are `<prefix>/export`, `<prefix>/demo-csv` and `<prefix>/import`. */
  prefix: string;
  tags: string[];
  /** `view` reads the export and the template; `manage` imports (and is checked again when a queued import starts). */
  permissions: { view: Permission; manage: Permission };
  export: Documented & {
    querystring: Q;
    /** The rows in batches, encoded here (the embedded database, and PostgreSQL without `copy`). */
    rows(db: Db, scope: Scope, query: Static<Q>): Readable;
    /** On PostgreSQL: the same rows and cells as one query for `COPY … TO STDOUT` (platform/csv/copy-out.ts). */
    copy?: { header: string[]; query(db: Db, scope: Scope, query: Static<Q>): CompiledQuery };
  };
  template: Documented & { rows(db: Db, scope: Scope): Promise<string> };
  import: Documented & {
    json: TSchema;
    multipart: TSchema;
    /** Error statuses the import answers besides 400, 401, 403, 413, 415 and 422 (409 when a retry may succeed). */
    errors?: number[];
    run: ImportDefinition['run'];
    /** The tables the import writes (their statistics are refreshed after a large import). */
    writes: ImportDefinition['writes'];
  };
}

/**
 * Defines the kind's import on the runner and returns its three routes, by name: a module places
 * each where its route list has it (the order is the OpenAPI document's order).
 */
export function importExportRoutes<Q extends TSchema>(deps: { db: Db; runner: ImportRunner; pool?: pg.Pool | undefined }, d: ImportExportDescription<Q>) {
  const { db, runner, pool } = deps;
  runner.define({ kind: d.kind, arrayField: d.kind, permission: d.permissions.manage, run: d.import.run, writes: d.import.writes });
  const view = { auth: 'account', permission: d.permissions.view } as const;
  return {
    export: defineRoute({
      method: 'GET',
      url: `${d.prefix}/export`,
      policy: view,
      schema: {
        tags: d.tags,
        summary: d.export.summary,
        description: d.export.description,
        querystring: d.export.querystring,
        produces: ['text/csv'],
        response: { 200: CsvBody, ...errorResponses(400, 401, 403) },
      },
      handler: ({ request, reply, scope }) => {
        const query = request.query as Static<Q>;
        const rows = pool && d.export.copy ? copyCsv(pool, d.export.copy.header, d.export.copy.query(db, scope, query)) : d.export.rows(db, scope, query);
        return sendCsv(reply, datedFilename(d.kind), rows);
      },
    }),
    template: defineRoute({
      method: 'GET',
      url: `${d.prefix}/demo-csv`,
      policy: view,
      schema: {
        tags: d.tags,
        summary: d.template.summary,
        description: d.template.description,
        produces: ['text/csv'],
        response: { 200: CsvBody, ...errorResponses(401, 403) },
      },
      handler: async ({ reply, scope }) => sendCsv(reply, `${d.kind}-template.csv`, await d.template.rows(db, scope)),
    }),
    import: defineRoute({
      method: 'POST',
      url: `${d.prefix}/import`,
      policy: { auth: 'account', permission: d.permissions.manage },
      bodyLimit: IMPORT_MAX_BYTES,
      preValidation: multipartBodyPlaceholder,
      schemaErrorFormatter: importRowLimit,
      schema: {
        tags: d.tags,
        summary: d.import.summary,
        description: d.import.description,
        // The handler reads the body itself (a CSV upload streams); the schemas document and check the JSON form.
        body: { content: { 'application/json': { schema: d.import.json }, 'multipart/form-data': { schema: d.import.multipart } } } as unknown as TSchema,
        response: {
          201: ImportResult,
          207: ImportResult,
          ...errorResponses(400, 401, 403, 413, 415, 422, ...(d.import.errors ?? [])),
        },
      },
      handler: ({ request, reply, scope }) => runner.handle(request, reply, scope, d.kind),
    }),
  };
}
