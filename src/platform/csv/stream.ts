import { pipeline, Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { textProblem } from '../http/text-hygiene.js';
import { Utf8Guard } from '../http/utf8.js';
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

/** The file is not parseable CSV; `line` (1-based, the header is line 1) and `column` when known. */
export class CsvFormatError extends Error {
  constructor(
    message: string,
    readonly line?: number,
    readonly column?: string,
  ) {
    super(message);
  }
}

/**
 * Bytes of the file that are not UTF-8: `row` is the 1-based data row (0: the header line, where
 * `column` is the column's position), `line` the file's line where the row ends.
 */
export class CsvEncodingError extends CsvFormatError {
  constructor(
    readonly row: number,
    line: number | undefined,
    column: string | undefined,
  ) {
    const where = row === 0 ? 'the header line' : `row ${row}${line === undefined ? '' : ` (line ${line})`}`;
    super(
      `The file is not UTF-8: ${where}${column === undefined ? '' : `, column ${row === 0 ? column : `"${column}"`},`} holds bytes that are not a UTF-8 character; save it as UTF-8 and send it again`,
      line,
      column,
    );
  }
}

const REPLACEMENT = '\uFFFD';

/** Parses a CSV stream into records keyed by normalised header; stops at `maxRows`. */
export async function* parseCsvRecords(input: NodeJS.ReadableStream, maxRows: number): AsyncGenerator<Record<string, string>> {
  // The parser decodes as UTF-8 with U+FFFD for bytes that are not; the guard in front notes where
  // the first such bytes are, and the record that spans them is refused with its row and column.
  const guard = new Utf8Guard();
  let headerColumn: string | undefined;
  const parser = parse({
    columns: (header: string[]) => {
      const at = header.findIndex((name) => name.includes(REPLACEMENT));
      if (guard.invalidAt !== null && at >= 0) headerColumn = `${at + 1}`;
      return header.map(normaliseHeader);
    },
    bom: true,
    skip_empty_lines: true,
    trim: true,
    relax_column_count: true,
    max_record_size: 64 * 1024,
    info: true,
  });
  // An upload that is cut off (the part stream is destroyed without ending, possibly before we
  // even see it) must fail the parser instead of leaving it waiting for more input forever.
  const source = input as Readable;
  if (source.destroyed && !source.readableEnded) throw new TruncatedInputError();
  source.once('close', () => {
    if (!source.readableEnded) parser.destroy(new TruncatedInputError());
  });
  pipeline(source, guard, parser, () => undefined);
  let count = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number; bytes: number } }>) {
      if (headerColumn !== undefined) throw new CsvEncodingError(0, 1, headerColumn);
      count += 1;
      if (count > maxRows) throw new CsvTooManyRowsError(maxRows);
      // Records end in order, so the first one that ends past the bad bytes holds them.
      if (guard.invalidAt !== null && info.bytes > guard.invalidAt) {
        const column = Object.entries(record).find(([, cell]) => typeof cell === 'string' && cell.includes(REPLACEMENT))?.[0];
        throw new CsvEncodingError(count, info.lines, column);
      }
      for (const [column, cell] of Object.entries(record)) {
        const problem = typeof cell === 'string' ? textProblem(cell) : null;
        if (problem) throw new CsvFormatError(`The cell in column "${column}" on line ${info.lines} ${problem}`, info.lines, column);
      }
      yield record;
    }
    if (headerColumn !== undefined) throw new CsvEncodingError(0, 1, headerColumn);
    if (guard.invalidAt !== null) throw new CsvEncodingError(count + 1, undefined, undefined);
  } catch (error) {
    if (error instanceof CsvTooManyRowsError || error instanceof CsvFormatError) throw error;
    if (error instanceof TruncatedInputError || (error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') throw new TruncatedInputError();
    // Every parser error is the file's fault (the parser names them with codes that do not all share a prefix).
    if (error instanceof CsvError) {
      const e = error as CsvError & { lines?: number; column?: string | number };
      throw new CsvFormatError(error.message, e.lines, e.column === undefined || e.column === null ? undefined : String(e.column));
    }
    throw error;
  }
}

/** The input stream ended before the file did (a cut-off upload). */
export class TruncatedInputError extends Error {
  constructor() {
    super('The upload ended before the file was complete');
  }
}

export class CsvTooManyRowsError extends Error {
  constructor(readonly maxRows: number) {
    super(`more than ${maxRows} rows`);
  }
}
