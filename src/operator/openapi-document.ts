import { buildApp, type App } from '../app.js';
import { openDatabase } from '../platform/db/database.js';
import type { OpenApiDocument } from '../platform/http/openapi.js';

/** The server URL of the committed document (the default PUBLIC_BASE_URL); a running service names its own. */
export const COMMITTED_DOCUMENT_BASE_URL = 'http://127.0.0.1:3000';

/**
 * The OpenAPI document as the service serves it at /openapi.json, built from a throw-away app
 * (in-memory database, placeholder secrets, every optional route family on) so that it never
 * depends on the machine: `npm run openapi` commits it as docs/openapi.json.
 */
export async function generateOpenApiDocument(): Promise<OpenApiDocument> {
  return withDocumentApp(async (app) => structuredClone(app.swagger()) as unknown as OpenApiDocument);
}

/** Runs `read` on a ready throw-away app built as above (the generated reference docs read its routes too). */
export async function withDocumentApp<T>(read: (app: App) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl: undefined, dataDir: null });
  try {
    const app = await buildApp({
      database,
      jwt: { secret: 'openapi-document-placeholder-secret-0123456789', issuer: 'patchbay', audience: 'patchbay-api', jwksUrl: undefined },
      licensing: { encryptionKey: Buffer.alloc(32), rateLimit: { perIp: 1, perSerial: 1, perSerialTotal: 1 } },
      jobs: { run: false },
      logger: false,
      publicBaseUrl: COMMITTED_DOCUMENT_BASE_URL,
      // The checkout webhook route exists only when a secret is configured; the document shows it.
      checkout: { webhookSecrets: ['openapi-document-placeholder'] },
      // The console's outbox exists only in development; the document shows it.
      mail: { outbox: true },
    });
    try {
      await app.ready();
      return await read(app);
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
  }
}

/** The committed file's exact text: stable key order as built, two-space indent, final newline. */
export const serializeOpenApiDocument = (document: OpenApiDocument) => `${JSON.stringify(document, null, 2)}\n`;
