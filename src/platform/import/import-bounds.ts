import type { SchemaErrorFormatter } from 'fastify/types/schema.js';
import { AppError } from '../http/errors.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, ImportErrors } from './errors.js';

/** Longest multipart text field of an import form (`productMappings`); app.ts gives @fastify/multipart this limit. */
export const IMPORT_FIELD_MAX_BYTES = 1024 * 1024;

/**
 * The JSON row arrays of the import routes carry `maxItems` like every request array, and the
 * schema checks it before anything reads a row; but more rows than an import may hold is the
 * import's own 413 IMPORT_TOO_LARGE (as for a CSV file), not a 400. Route option of the import routes.
 */
export const importRowLimit: SchemaErrorFormatter = (errors, dataVar) => {
  const overLimit = errors.some((e) => e.keyword === 'maxItems' && e.params.limit === IMPORT_MAX_ROWS && /^\/\w+$/.test(e.instancePath));
  if (dataVar === 'body' && overLimit) {
    return new AppError(ImportErrors.IMPORT_TOO_LARGE, `An import may hold at most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES} bytes`);
  }
  // What Fastify's own formatter says; the error handler answers it with the field errors.
  return new Error(errors.map((e) => `${dataVar}${e.instancePath} ${e.message ?? 'is invalid'}`).join(', '));
};
