import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Transaction } from 'kysely';
import type { DB } from './schema.js';

// Not `Tx` from transaction.ts: database.ts loads this file, and transaction.ts's types load database.ts (a circle).
type Tx = Transaction<DB>;

/**
 * `COPY … FROM STDIN` inside a Kysely transaction (PostgreSQL only). Kysely does not hand out the `pg` client a
 * transaction runs on, so every pooled client is known by its backend's process id (`trackCopyClients`, called where
 * the pool is made), and the transaction asks its backend for that id. The transaction's statements wait on its
 * promise meanwhile, so nothing else uses the connection during the COPY. The embedded database has no client here:
 * `copyClientOf` answers null and the caller keeps its statement path.
 */
const clients = new Map<number, pg.PoolClient>();

export function trackCopyClients(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const pid = (client as unknown as { processID: number | null }).processID;
    if (pid === null || pid === undefined) return;
    clients.set(pid, client);
    client.once('end', () => {
      if (clients.get(pid) === client) clients.delete(pid);
    });
  });
}

/** The `pg` client the transaction runs on, or null (embedded database, or a pool made elsewhere). */
export async function copyClientOf(tx: Tx): Promise<pg.PoolClient | null> {
  if (clients.size === 0) return null;
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx);
  return clients.get(rows[0]!.pid) ?? null;
}

/** A value as a field of COPY's text format: `\N` for NULL, backslash escapes for the characters the format uses. */
export function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

/** Streams text-format lines (each ending in `\n`) into `COPY <target> FROM STDIN` on the transaction's client. */
export async function copyLines(client: pg.PoolClient, target: string, lines: Iterable<string>): Promise<void> {
  async function* chunks() {
    let chunk = '';
    for (const line of lines) {
      chunk += line;
      if (chunk.length >= 256 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  await pipeline(Readable.from(chunks()), client.query(copyFrom(`COPY ${target} FROM STDIN`)));
}
