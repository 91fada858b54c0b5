import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { csvDocument } from './stream.js';

/**
 * An export on PostgreSQL: `COPY (<query>) TO STDOUT (FORMAT csv)` streamed to the client with back-pressure
 * (the socket is paused while the client is slow), so the server encodes the CSV and the process only moves
 * bytes. The embedded database has no streaming COPY; its exports keep the batch path (`csvStream`).
 *
 * The query selects the final cells as text (spreadsheet formulas neutralised in SQL, see `neutralisedText`),
 * and empty text as NULL: COPY writes NULL as an empty field and an empty string as `""`, where the batch path
 * writes nothing for both. PostgreSQL ends records with LF; RFC 4180 and the batch path use CRLF, so record ends
 * (LF outside quotes) become CRLF on the way out. The output is byte for byte the batch path's
 * (`test/customers/export-copy.test.ts`).
 */
export function copyCsv(pool: pg.Pool, header: string[], query: CompiledQuery): Readable {
  const statement = `COPY (${inlineParameters(query)}) TO STDOUT (FORMAT csv)`;
  return Readable.from(
    (async function* () {
      yield Buffer.from(csvDocument(header, []));
      const client = await pool.connect();
      let complete = false;
      const records = new CrlfRecords();
      try {
        const done = pipeline(client.query(copyTo(statement)), records);
        // Abandoned (the consumer went away), the pipeline fails once the connection is discarded below.
        done.catch(() => undefined);
        // Read at the consumer's pace: `records` buffers at most its high-water mark, and the COPY pauses the socket.
        for await (const chunk of records) yield chunk as Buffer;
        await done;
        complete = true;
      } finally {
        records.destroy();
        // A COPY abandoned or failed half-way leaves the connection mid-protocol: discard it, never reuse it.
        client.release(complete ? undefined : true);
      }
    })(),
    { objectMode: false, highWaterMark: 64 * 1024 },
  );
}

/**
 * SQL for a text cell as the batch path writes it: a cell starting with = + - @, a tab or a carriage return gets
 * a leading single quote (platform/csv/neutralise.ts), and empty text becomes NULL (an empty field).
 */
export function neutralisedText(expression: string): string {
  return `nullif(case when ${expression} ~ '^[=+@\\t\\r-]' then '''' || ${expression} else ${expression} end, '')`;
}

/** A timestamp as JavaScript's `toISOString` writes it (UTC, milliseconds). */
export function isoTimestamp(expression: string): string {
  return `to_char(${expression} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * COPY takes no bind parameters, so the compiled query's `$n` become literals: integers as digits, text and
 * timestamps through the driver's literal escaping, integer arrays as array literals. Anything else is refused
 * rather than guessed.
 */
export function inlineParameters(query: CompiledQuery): string {
  const used = new Set<number>();
  const text = query.sql.replace(/\$(\d+)\b/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= query.parameters.length) throw new Error(`COPY query refers to $${n}, which it does not have`);
    used.add(index);
    return literal(query.parameters[index]);
  });
  if (used.size !== query.parameters.length) throw new Error('COPY query has parameters it does not use');
  return text;
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (value instanceof Date) return `${pg.escapeLiteral(value.toISOString())}::timestamptz`;
  if (Array.isArray(value) && value.every((v) => typeof v === 'number' && Number.isSafeInteger(v))) return `'{${value.join(',')}}'`;
  throw new Error(`COPY query parameter of an unsupported kind: ${typeof value}`);
}

/** LF that ends a record (outside quotes) becomes CRLF; line breaks inside quoted fields stay as they are. */
export class CrlfRecords extends Transform {
  private quoted = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const pieces: Buffer[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === 0x22) this.quoted = !this.quoted;
      else if (byte === 0x0a && !this.quoted) {
        pieces.push(chunk.subarray(start, i), CRLF);
        start = i + 1;
      }
    }
    pieces.push(chunk.subarray(start));
    callback(null, Buffer.concat(pieces));
  }
}

const CRLF = Buffer.from('\r\n');
