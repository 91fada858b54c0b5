import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';
import { neutraliseCell } from './neutralise.js';

export type CsvCell = string | number | boolean | null | undefined | Date;

function toText(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (cell instanceof Date) return cell.toISOString();
  if (typeof cell === 'string') return neutraliseCell(cell);
  return String(cell);
}

/**
 * Turns batches of rows into a CSV byte stream with back-pressure: the next
 * batch is only fetched when the consumer has drained the previous one, so
 * memory does not grow with the number of rows.
 */
export function csvStream(header: string[], batches: AsyncIterable<CsvCell[][]>): Readable {
  const stringifier = stringify({ header: true, columns: header, bom: false });
  const source = Readable.from(
    (async function* () {
      for await (const batch of batches) {
        for (const row of batch) yield row.map(toText);
      }
    })(),
    { objectMode: true, highWaterMark: 256 },
  );
  source.on('error', (error) => stringifier.destroy(error));
  return source.pipe(stringifier);
}

export function csvDocument(header: string[], rows: CsvCell[][]): string {
  const lines = [header, ...rows.map((r) => r.map(toText))];
  return lines.map((cells) => cells.map(quote).join(',')).join('\r\n') + '\r\n';
}

function quote(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
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
