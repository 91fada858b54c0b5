import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { CsvEncodingError, CsvFormatError, CsvTooManyRowsError, normaliseHeader, parseCsvRecords, TruncatedInputError } from '../csv/stream.js';
import { AppError, CommonErrors } from '../http/errors.js';
import { parseJsonYielding, rawJsonBody } from '../http/json-body.js';
import { findIllFormedText, TextErrors } from '../http/text-hygiene.js';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, ImportErrors } from './errors.js';
import { mapYielding } from './yielding-json.js';

/**
 * Multipart bodies are consumed by the handler as a stream; give the schema
 * validator an empty object to check instead of nothing.
 */
export async function multipartBodyPlaceholder(request: FastifyRequest): Promise<void> {
  if (request.isMultipart() && request.body === undefined) request.body = {};
}

/** Rows keyed by normalised field name (firstName, first_name and "First Name" are one field). */
export interface RawImport {
  rows: Array<Record<string, unknown>>;
  productMappings: unknown;
  source: 'json' | 'csv';
  /** The upload as it came (the JSON body, or the CSV file): what a queued import stores and reads again. */
  upload?: Buffer;
}

/** Rows repeat their keys: each distinct key is normalised once per import. */
function keyNormaliser() {
  const seen = new Map<string, string>();
  return (row: unknown): Record<string, unknown> => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return { __invalid: row };
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) {
      let name = seen.get(key);
      if (name === undefined) seen.set(key, (name = normaliseHeader(key)));
      out[name] = value;
    }
    return out;
  };
}

const tooLarge = () =>
  new AppError(ImportErrors.IMPORT_TOO_LARGE, `An import may hold at most ${IMPORT_MAX_ROWS} rows and ${IMPORT_MAX_BYTES} bytes`);

/**
 * Reads an import from either a JSON body (`<arrayField>` and `productMappings`)
 * or a multipart form (`file` CSV and a `productMappings` JSON field). The CSV
 * is parsed as it streams in; limits are enforced while reading.
 */
export async function readImportRequest(request: FastifyRequest, arrayField: string): Promise<RawImport> {
  if (!request.isMultipart()) {
    const upload = rawJsonBody(request);
    return { ...(await fromJsonBody(request.body, arrayField)), ...(upload ? { upload } : {}) };
  }

  let rows: Array<Record<string, unknown>> | undefined;
  let productMappings: unknown;
  const fileChunks: Buffer[] = [];
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file' || rows) {
        part.file.resume();
        throw new AppError(CommonErrors.VALIDATION_FAILED, 'Send exactly one file, in the "file" field');
      }
      rows = [];
      // The file's bytes as they pass to the parser (which reads through pipes: this listener sees the same chunks).
      part.file.on('data', (chunk: Buffer) => fileChunks.push(chunk));
      try {
        for await (const record of parseCsvRecords(part.file, IMPORT_MAX_ROWS)) rows.push(record);
      } catch (error) {
        if (error instanceof CsvTooManyRowsError) throw tooLarge();
        if (error instanceof TruncatedInputError) throw new AppError(CommonErrors.MALFORMED_MULTIPART, error.message);
        if (error instanceof CsvEncodingError) {
          throw new AppError(TextErrors.INVALID_UTF8, error.message, {
            body: { row: error.row, ...(error.line === undefined ? {} : { line: error.line }), ...(error.column === undefined ? {} : { column: error.column }) },
          });
        }
        if (error instanceof CsvFormatError) {
          throw new AppError(ImportErrors.INVALID_CSV, error.message, {
            body: { ...(error.line === undefined ? {} : { line: error.line }), ...(error.column === undefined ? {} : { column: error.column }) },
          });
        }
        throw error;
      }
      if (part.file.truncated) throw tooLarge();
    } else if (part.fieldname === 'productMappings') {
      // The form parser decodes text fields itself, putting U+FFFD where bytes are not UTF-8; the
      // bytes are gone by then, so a field holding U+FFFD is refused rather than read as it came.
      if (String(part.value).includes('\uFFFD')) {
        const error = { path: 'body/productMappings', message: 'contains bytes that are not UTF-8 (or U+FFFD, which stands for them)' };
        throw new AppError(TextErrors.INVALID_UTF8, `${error.path} ${error.message}`, { errors: [error] });
      }
      try {
        productMappings = JSON.parse(String(part.value));
      } catch {
        throw new AppError(ImportErrors.INVALID_PRODUCT_MAPPING, 'productMappings must be a JSON object');
      }
      // The text-hygiene hook sees JSON bodies only; this JSON arrives inside the form.
      const found = findIllFormedText(productMappings, 'body/productMappings');
      if (found) throw new AppError(CommonErrors.INVALID_TEXT, `${found.path} ${found.message}`, { errors: [found] });
    } else if (part.fieldname === arrayField) {
      throw new AppError(CommonErrors.VALIDATION_FAILED, `Send "${arrayField}" as JSON, or a CSV "file" as multipart`);
    }
  }
  if (!rows) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, 'The multipart form has no "file" part', {
      errors: [{ path: 'body/file', message: 'is required' }],
    });
  }
  return { rows, productMappings, source: 'csv', upload: Buffer.concat(fileChunks) };
}

/** The rows of a JSON body (`<arrayField>` and `productMappings`), keys normalised. */
async function fromJsonBody(value: unknown, arrayField: string): Promise<RawImport> {
  const body = (value ?? {}) as Record<string, unknown>;
  const rows = body[arrayField];
  if (!Array.isArray(rows)) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, `Send a "${arrayField}" array or a multipart "file"`, {
      errors: [{ path: `body/${arrayField}`, message: 'must be an array' }],
    });
  }
  if (rows.length > IMPORT_MAX_ROWS) throw tooLarge();
  return { rows: await mapYielding(rows, keyNormaliser()), productMappings: body.productMappings, source: 'json' };
}

/**
 * A queued import's stored upload read again, as `readImportRequest` read it when it came: the same parser for the
 * same bytes, so the job sees the rows (and row numbers) the request counted. A CSV's productMappings were stored
 * beside the file as `{ value }` (they came in their own form field, already checked; `value` absent when none came).
 */
export async function readStoredUpload(upload: string, source: RawImport['source'], csvMappings: unknown, arrayField: string): Promise<RawImport> {
  if (source === 'json') return fromJsonBody(await parseJsonYielding(upload), arrayField);
  const rows: Array<Record<string, unknown>> = [];
  for await (const record of parseCsvRecords(Readable.from([upload], { objectMode: false }), IMPORT_MAX_ROWS)) rows.push(record);
  return { rows, productMappings: (csvMappings as { value?: unknown } | null)?.value, source: 'csv' };
}
