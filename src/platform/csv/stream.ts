import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { stringify as stringifySync } from 'csv-stringify/sync';
import { neutraliseCell } from './neutralise.js';

export type CsvCell = string | number | boolean | null | undefined | Date;

function toText(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (cell instanceof Date) return cell.toISOString();
  if (typeof cell === 'string') return neutraliseCell(cell);
  return String(cell);
}

/**
 * Starts fetching the next item while the consumer works on the current one,
 * so the database and the encoder overlap. At most one item is held ahead.
 */
export async function* prefetch<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      const current = await next;
      if (current.done) return;
      next = iterator.next();
      yield current.value;
    }
  } finally {
    await iterator.return?.();
  }
}

// RFC 4180: CRLF between records; any cell with a line break is quoted.
const encode = (rows: string[][]) => stringifySync(rows, { record_delimiter: 'windows', quoted_match: /[\r\n]/ });

/**
 * Turns batches of rows into a CSV byte stream with back-pressure: a batch is
 * encoded as one string, and the batch after next is only fetched once the
 * consumer has taken the current one, so memory is bounded by two batches
 * whatever the number of rows.
 */
export function csvStream(header: string[], batches: AsyncIterable<CsvCell[][]>): Readable {
  return Readable.from(
    (async function* () {
      yield encode([header]);
      for await (const batch of prefetch(batches)) {
        if (batch.length > 0) yield encode(batch.map((row) => row.map(toText)));
      }
    })(),
    { objectMode: false, highWaterMark: 64 * 1024 },
  );
}

export function csvDocument(header: string[], rows: CsvCell[][]): string {
  return encode([header, ...rows.map((r) => r.map(toText))]);
}

/** Header names compare without case, spaces, dashes or underscores: First Name = first_name = firstName. */
export function normaliseHeader(name: string): string {
  return name.toLowerCase().replace(/[\s_\-]/g, '');
}

export class CsvFormatError extends Error {}

/** Parses a CSV stream into records keyed by normalised header; stops at `maxRows`. */
export async function* parseCsvRecords(input: NodeJS.ReadableStream, maxRows: number): AsyncGenerator<Record<string, string>> {
  const parser = parse({
    columns: (header: string[]) => header.map(normaliseHeader),
    bom: true,
    skip_empty_lines: true,
    trim: true,
    relax_column_count: true,
    max_record_size: 64 * 1024,
  });
  input.pipe(parser);
  input.on('error', (error) => parser.destroy(error));
  let count = 0;
  try {
    for await (const record of parser) {
      count += 1;
      if (count > maxRows) throw new CsvTooManyRowsError(maxRows);
      yield record as Record<string, string>;
    }
  } catch (error) {
    if (error instanceof CsvTooManyRowsError) throw error;
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('CSV_')) throw new CsvFormatError((error as Error).message);
    throw error;
  }
}

export class CsvTooManyRowsError extends Error {
  constructor(readonly maxRows: number) {
    super(`more than ${maxRows} rows`);
  }
}
