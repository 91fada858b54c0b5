import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadFixtures } from '../../src/operator/fixtures.js';
import { operatorScope } from '../../src/platform/auth/scope.js';
import { type Database, migrate, openDatabase } from '../../src/platform/db/database.js';
import { MAX_ATTEMPTS, OutboxDispatcher } from '../../src/platform/mail/dispatcher.js';
import { enqueueEmails, pendingCount } from '../../src/platform/mail/outbox.repo.js';
import { FileTransport, LogTransport, type MailTransport, MemoryTransport, type OutgoingEmail } from '../../src/platform/mail/transport.js';
import { onPostgres, TEST_JWT, unique } from '../helpers/app.js';

const MINUTE = 60_000;
const FROM = 'Patchbay <noreply@patchbay.test>';

/**
 * A dispatcher claims every due e-mail of its database. On PostgreSQL the suite's
 * files share one database, so this file works in a database of its own: its
 * failing transports must not fail (or its dispatchers send) other files' e-mail.
 */
async function openOwnDatabase(): Promise<{ database: Database; drop(): Promise<void> }> {
  if (!process.env.DATABASE_URL) {
    const database = await openDatabase({ dataDir: null });
    await migrate(database.db);
    return { database, drop: () => database.close() };
  }
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  const name = `outbox_test_${Date.now()}_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: null, poolSize: 10 });
  await migrate(database.db);
  return {
    database,
    drop: async () => {
      await database.close();
      // The pool's sockets close a moment after close() resolves; forcing the drop
      // earlier would terminate them and surface as unhandled connection errors.
      for (let i = 0; i < 50; i++) {
        const { rows } = await admin.query('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
        if (rows[0].n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}

let own: Awaited<ReturnType<typeof openOwnDatabase>> | undefined;
let workspaceId = 0;
const db = () => own!.database.db;

beforeAll(async () => {
  own = await openOwnDatabase();
  const fixtures = await loadFixtures(db(), TEST_JWT, {
    workspaces: [{ key: 'ws', name: 'Outbox' }],
    accounts: [{ key: 'owner', email: `owner-${unique()}@dev.test` }],
    memberships: [{ account: 'owner', workspace: 'ws', owner: true }],
  });
  workspaceId = fixtures.ids.workspaces.ws!;
});
afterAll(async () => own?.drop());
beforeEach(async () => {
  await db().deleteFrom('email_outbox').execute();
});

async function queue(count: number, recipient = (i: number) => `r${i}@cust.test`): Promise<number[]> {
  const scope = operatorScope(workspaceId, 0);
  return db()
    .transaction()
    .execute((tx) =>
      enqueueEmails(
        tx,
        scope,
        Array.from({ length: count }, (_, i) => ({ kind: 'test', recipient: recipient(i), subject: `Subject ${i}`, text: `Body ${i}`, data: { i } })),
      ),
    );
}

const row = (id: number) =>
  db().selectFrom('email_outbox').where('id', '=', id).select(['status', 'attempts', 'last_error', 'next_attempt_at', 'sent_at']).executeTakeFirstOrThrow();

/** Makes every pending e-mail due now, as if its back-off had elapsed. */
const makeDue = () => sql`update email_outbox set next_attempt_at = now() - interval '1 second' where status = 'pending'`.execute(db());

const silentLog = { error: () => undefined };

/** Fails for the recipients given (or for everyone), and remembers what it was asked to send. */
class FlakyTransport implements MailTransport {
  readonly name = 'flaky';
  readonly attempts: OutgoingEmail[] = [];
  readonly delivered: OutgoingEmail[] = [];
  closed = false;
  constructor(private readonly failing: (email: OutgoingEmail) => boolean = () => true) {}
  async send(email: OutgoingEmail): Promise<void> {
    this.attempts.push(email);
    if (this.failing(email)) throw new Error(`SMTP 451 temporary failure for ${email.to}`);
    this.delivered.push(email);
  }
  close(): void {
    this.closed = true;
  }
}

describe(`OutboxDispatcher (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('sends every due e-mail, marks it sent and returns how many were sent', async () => {
    const ids = await queue(3);
    const transport = new MemoryTransport();
    const dispatcher = new OutboxDispatcher(db(), transport, FROM, silentLog);
    expect(await dispatcher.drain()).toBe(3);
    expect(transport.sent).toEqual(ids.map((id, i) => ({ id, from: FROM, to: `r${i}@cust.test`, subject: `Subject ${i}`, text: `Body ${i}` })));
    for (const id of ids) expect(await row(id)).toMatchObject({ status: 'sent', attempts: 1, last_error: null, sent_at: expect.anything() });
    expect(await pendingCount(db())).toBe(0);
    expect(await dispatcher.drain()).toBe(0);
    expect(transport.sent).toHaveLength(3);
  });

  it('drains more than one batch in one call', async () => {
    await queue(45);
    const transport = new MemoryTransport();
    expect(await new OutboxDispatcher(db(), transport, FROM, silentLog).drain()).toBe(45);
    expect(new Set(transport.sent.map((m) => m.id)).size).toBe(45);
  });

  it('leaves e-mails that are not yet due alone', async () => {
    const [id] = await queue(1);
    await sql`update email_outbox set next_attempt_at = now() + interval '1 hour' where id = ${id}`.execute(db());
    const transport = new MemoryTransport();
    expect(await new OutboxDispatcher(db(), transport, FROM, silentLog).drain()).toBe(0);
    expect(transport.sent).toEqual([]);
    expect(await row(id!)).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('keeps a failed e-mail pending with the attempt counted, the error kept and a later retry, and sends the others', async () => {
    const ids = await queue(3);
    const transport = new FlakyTransport((m) => m.to === 'r1@cust.test');
    const dispatcher = new OutboxDispatcher(db(), transport, FROM, silentLog);
    const before = Date.now();
    expect(await dispatcher.drain()).toBe(2);
    expect(transport.delivered.map((m) => m.to)).toEqual(['r0@cust.test', 'r2@cust.test']);

    const failed = await row(ids[1]!);
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, last_error: 'SMTP 451 temporary failure for r1@cust.test', sent_at: null });
    const retryAt = new Date(failed.next_attempt_at).getTime();
    expect(retryAt).toBeGreaterThanOrEqual(before + MINUTE);
    expect(retryAt).toBeLessThanOrEqual(Date.now() + MINUTE);

    // Not due yet: a second drain does not try again.
    expect(await dispatcher.drain()).toBe(0);
    expect(transport.attempts).toHaveLength(3);
  });

  it('backs off exponentially and marks the e-mail failed after MAX_ATTEMPTS', async () => {
    const [id] = await queue(1);
    const transport = new FlakyTransport();
    const dispatcher = new OutboxDispatcher(db(), transport, FROM, silentLog);
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const before = Date.now();
      expect(await dispatcher.drain()).toBe(0);
      const r = await row(id!);
      expect(r, `attempt ${attempt}`).toMatchObject({ status: 'pending', attempts: attempt });
      const delay = new Date(r.next_attempt_at).getTime();
      expect(delay, `attempt ${attempt}`).toBeGreaterThanOrEqual(before + MINUTE * 2 ** (attempt - 1));
      expect(delay, `attempt ${attempt}`).toBeLessThanOrEqual(Date.now() + MINUTE * 2 ** (attempt - 1));
      await makeDue();
    }
    expect(await dispatcher.drain()).toBe(0);
    expect(await row(id!)).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, last_error: expect.stringContaining('SMTP 451') });
    expect(await pendingCount(db())).toBe(0);

    await makeDue();
    expect(await dispatcher.drain()).toBe(0);
    expect(transport.attempts).toHaveLength(MAX_ATTEMPTS);
  });

  it('records a thrown non-Error as the last error', async () => {
    const [id] = await queue(1);
    const transport: MailTransport = {
      name: 'odd',
      send: async () => {
        throw 'connection reset';
      },
    };
    await new OutboxDispatcher(db(), transport, FROM, silentLog).drain();
    expect(await row(id!)).toMatchObject({ status: 'pending', attempts: 1, last_error: 'connection reset' });
  });

  it('sends each e-mail once when two dispatchers drain at the same time', async () => {
    await queue(60);
    const [a, b] = [new MemoryTransport(), new MemoryTransport()];
    const counts = await Promise.all([new OutboxDispatcher(db(), a, FROM, silentLog).drain(), new OutboxDispatcher(db(), b, FROM, silentLog).drain()]);
    expect(counts[0]! + counts[1]!).toBe(60);
    const ids = [...a.sent, ...b.sent].map((m) => m.id);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
  });

  it('drains on kick, runs once more for a kick during a drain, and stops cleanly', async () => {
    const transport = new FlakyTransport(() => false);
    const dispatcher = new OutboxDispatcher(db(), transport, FROM, silentLog, 3_600_000);
    await queue(2, (i) => `first${i}@cust.test`);
    dispatcher.kick();
    // Queued while the first drain may still run: the follow-up drain picks it up.
    await queue(1, () => 'late@cust.test');
    dispatcher.kick();
    await dispatcher.idle();
    expect(transport.delivered.map((m) => m.to).sort()).toEqual(['first0@cust.test', 'first1@cust.test', 'late@cust.test']);

    await dispatcher.stop();
    expect(transport.closed).toBe(true);
    await queue(1, () => 'after-stop@cust.test');
    dispatcher.kick();
    await dispatcher.idle();
    expect(transport.delivered.map((m) => m.to)).not.toContain('after-stop@cust.test');
    expect(await pendingCount(db())).toBe(1);
  });

  it('logs a drain that fails instead of throwing from kick', async () => {
    const errors: unknown[] = [];
    const broken = new Proxy({}, { get: () => { throw new Error('database gone'); } }) as unknown as ReturnType<typeof db>;
    const dispatcher = new OutboxDispatcher(broken, new MemoryTransport(), FROM, { error: (obj) => errors.push(obj) });
    dispatcher.kick();
    await dispatcher.idle();
    expect(errors).toEqual([{ err: expect.objectContaining({ message: 'database gone' }) }]);
  });
});

describe('mail transports', () => {
  const email = (id: number): OutgoingEmail => ({ id, from: FROM, to: `t${id}@cust.test`, subject: `Hello ${id}`, text: `Serial: ABC-${id}\nline two` });

  it('FileTransport appends one JSON line per e-mail, creating the directory', async () => {
    const root = await mkdtemp(join(tmpdir(), 'patchbay-mail-'));
    try {
      const dir = join(root, 'nested', 'mail');
      const transport = new FileTransport(dir);
      await transport.send(email(1));
      await transport.send(email(2));
      const lines = (await readFile(join(dir, 'outbox.jsonl'), 'utf8')).split('\n');
      expect(lines.pop()).toBe('');
      expect(lines).toHaveLength(2);
      const parsed = lines.map((l) => JSON.parse(l));
      expect(parsed).toEqual([1, 2].map((id) => ({ ...email(id), sentAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) })));
      // Another transport on the same directory appends rather than overwriting.
      await new FileTransport(dir).send(email(3));
      expect((await readFile(join(dir, 'outbox.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(3);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('LogTransport logs the id, recipient and subject but never the body', async () => {
    const entries: Array<[Record<string, unknown>, string]> = [];
    await new LogTransport((entry, message) => entries.push([entry, message])).send(email(7));
    expect(entries).toEqual([[{ emailId: 7, to: 't7@cust.test', subject: 'Hello 7' }, expect.any(String)]]);
    expect(JSON.stringify(entries)).not.toContain('ABC-7');
  });

  it('MemoryTransport keeps what it was given', async () => {
    const transport = new MemoryTransport();
    await transport.send(email(1));
    expect(transport.sent).toEqual([email(1)]);
  });
});
