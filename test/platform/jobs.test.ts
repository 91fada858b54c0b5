import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TSchema, Type } from '@sinclair/typebox';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, migrate, openDatabase } from '../../src/platform/db/database.js';
import { inTransaction } from '../../src/platform/db/transaction.js';
import { defineJob, type JobDefinition, type JobOptions } from '../../src/platform/jobs/define-job.js';
import { findJob, finishAs, listJobs, makeJobsDue, stageClaim, storePayload } from '../../src/platform/jobs/jobs.testing.js';
import { JobRunner, PermanentJobError } from '../../src/platform/jobs/runner.js';
import { LinkTokens } from '../../src/platform/mail/link-tokens.js';
import { defineEmail, enqueueEmail } from '../../src/platform/mail/mail.js';
import { registerMailJobs } from '../../src/platform/mail/mail.jobs.js';
import { FileTransport, LogTransport, MemoryTransport, type OutgoingEmail } from '../../src/platform/mail/transport.js';
import { onPostgres, unique } from '../helpers/app.js';

// The job runner on the test database (each test process works its own queue, see the helpers).

const MINUTE = 60_000;
let database: Database;
const db = () => database.db;
const runners: JobRunner[] = [];

beforeAll(async () => {
  database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: null, poolSize: 10 });
  await migrate(database.db);
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop(1_000)));
});
afterAll(async () => database.close());

/** A runner that never polls on its own: it runs what commits announce, and what a test kicks. */
function runner(options: { pollIntervalMs?: number; concurrency?: number } = {}): JobRunner {
  const r = new JobRunner(db(), { pollIntervalMs: 3_600_000, ...options });
  runners.push(r);
  return r;
}

/** A job kind of its own per test (kinds are declared once per process). */
const AnyPayload = Type.Object({}, { additionalProperties: true });
const kind = <S extends TSchema = typeof AnyPayload>(options: JobOptions = {}, payload?: S): JobDefinition<S> =>
  defineJob(`test.${unique().toLowerCase()}`, payload ?? (AnyPayload as unknown as S), options);
const enqueue = (definition: JobDefinition, payloads: Array<Record<string, unknown>>) =>
  inTransaction(db(), (tx) => definition.enqueueMany(tx, payloads, { workspaceId: null }));
const job = async (id: number) => (await findJob(db(), id))!;
const makeDue = () => makeJobsDue(db());

describe(`JobRunner (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('runs a job enqueued in a committed transaction right after the commit, and records its result', async () => {
    const k = kind();
    const r = runner();
    const seen: unknown[] = [];
    r.handle(k, async (j) => {
      seen.push(j.payload);
      return { ok: true };
    });
    r.start();
    const [id] = await enqueue(k, [{ n: 1 }]);
    await r.idle();
    expect(seen).toEqual([{ n: 1 }]);
    expect(await job(id!)).toMatchObject({ state: 'succeeded', attempts: 1, result: { ok: true }, last_error: null, lease_until: null });
  });

  it('creates no job when the transaction rolls back', async () => {
    const k = kind();
    const r = runner();
    let runs = 0;
    r.handle(k, async () => void (runs += 1));
    r.start();
    await expect(
      inTransaction(db(), async (tx) => {
        await k.enqueue(tx, {}, { workspaceId: null });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await r.idle();
    expect(runs).toBe(0);
    expect(await listJobs(db(), { job: k })).toHaveLength(0);
  });

  it('retries a failed job with exponential back-off and gives up after its attempts, keeping the error', async () => {
    const k = kind({ maxAttempts: 4 });
    const r = runner();
    let runs = 0;
    r.handle(k, async () => {
      runs += 1;
      throw new Error(`SMTP 451 temporary failure (${runs})`);
    });
    r.start();
    const [id] = await enqueue(k, [{}]);
    for (let attempt = 1; attempt < 4; attempt += 1) {
      const before = Date.now();
      await r.idle();
      const row = await job(id!);
      expect(row, `attempt ${attempt}`).toMatchObject({ state: 'queued', attempts: attempt, last_error: `SMTP 451 temporary failure (${attempt})` });
      const retryAt = new Date(row.run_after).getTime();
      expect(retryAt).toBeGreaterThanOrEqual(before + MINUTE * 2 ** (attempt - 1) - 1_000);
      expect(retryAt).toBeLessThanOrEqual(Date.now() + MINUTE * 2 ** (attempt - 1));
      await makeDue();
      r.kick();
    }
    await r.idle();
    expect(await job(id!)).toMatchObject({ state: 'failed', attempts: 4, last_error: 'SMTP 451 temporary failure (4)', finished_at: expect.anything() });
    await makeDue();
    r.kick();
    await r.idle();
    expect(runs).toBe(4);
  });

  it('fails a job at once on a permanent error', async () => {
    const k = kind();
    const r = runner();
    r.handle(k, async () => {
      throw new PermanentJobError('the record is gone');
    });
    r.start();
    const [id] = await enqueue(k, [{}]);
    await r.idle();
    expect(await job(id!)).toMatchObject({ state: 'failed', attempts: 1, last_error: 'the record is gone' });
  });

  it('leaves jobs that are not due yet alone', async () => {
    const k = kind();
    const r = runner();
    let runs = 0;
    r.handle(k, async () => void (runs += 1));
    r.start();
    const id = await inTransaction(db(), (tx) => k.enqueue(tx, {}, { workspaceId: null, runAfter: new Date(Date.now() + 3_600_000) }));
    await r.idle();
    expect(runs).toBe(0);
    expect(await job(id)).toMatchObject({ state: 'queued', attempts: 0 });
  });

  it('takes over a job whose worker died once its lease has run out, and runs it again', async () => {
    const k = kind();
    const [id] = await enqueue(k, [{ n: 1 }]);
    // A worker claimed it and died: running, with a lease that has run out.
    await stageClaim(db(), id!, { worker: 'dead-worker', attempts: 1, leaseExpired: true });
    const r = runner();
    const attempts: number[] = [];
    r.handle(k, async (j) => void attempts.push(j.attempt));
    r.start();
    await r.idle();
    expect(attempts).toEqual([2]);
    expect(await job(id!)).toMatchObject({ state: 'succeeded', attempts: 2, locked_by: r.workerId });
    // The dead worker cannot finish it any more.
    expect(await finishAs(db(), id!, 'dead-worker')).toBe(false);
  });

  it('does not take a job whose lease is still running', async () => {
    const k = kind();
    const [id] = await enqueue(k, [{}]);
    await stageClaim(db(), id!, { worker: 'live-worker', attempts: 1, leaseExpired: false });
    const r = runner();
    let runs = 0;
    r.handle(k, async () => void (runs += 1));
    r.start();
    await r.idle();
    expect(runs).toBe(0);
  });

  it('gives running jobs back at shutdown when they outlast the grace period', async () => {
    const k = kind();
    const r = runner();
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    r.handle(k, async () => blocked);
    r.start();
    const [id] = await enqueue(k, [{}]);
    for (let i = 0; i < 50 && (await job(id!)).state !== 'running'; i += 1) await new Promise((x) => setTimeout(x, 20));
    await r.stop(100);
    expect(await job(id!)).toMatchObject({ state: 'queued', attempts: 0, lease_until: null, locked_by: null });
    release();
  });

  it('records jobs that finish together in one statement, each with its own result', async () => {
    const k = kind();
    const r = runner({ concurrency: 16 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    r.handle(k, async (j) => {
      started += 1;
      if (started === 16) release();
      await released;
      return { n: (j.payload as { n: number }).n };
    });
    const ids = await enqueue(k, Array.from({ length: 16 }, (_, n) => ({ n })));
    r.start();
    await r.idle();
    const jobs = await Promise.all(ids.map((id) => job(id)));
    expect(jobs.map((j) => [j.state, j.result, j.lease_until])).toEqual(ids.map((_, n) => ['succeeded', { n }, null]));
    // Sixteen handlers that end in the same turn: the first completion is recorded alone, the others together while
    // it runs (one statement, one now()); one statement per job would give sixteen distinct times.
    expect(new Set(jobs.map((j) => new Date(j.finished_at as unknown as string).getTime())).size).toBeLessThanOrEqual(4);
  });

  it('claims a newly queued job at once while slow jobs hold most slots', async () => {
    const slow = kind();
    const quick = kind();
    const r = runner({ concurrency: 8 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let slowRunning = 0;
    r.handle(slow, async () => {
      slowRunning += 1;
      await held;
    });
    const ran: number[] = [];
    r.handle(quick, async (j) => {
      ran.push(j.id);
    });
    r.start();
    await enqueue(slow, Array.from({ length: 7 }, (_, n) => ({ n })));
    await expect.poll(() => slowRunning).toBe(7);
    // One slot free of eight: a finished job would wait for two, but a queued one takes the free slot now.
    const [id] = await enqueue(quick, [{}]);
    await expect.poll(() => ran, { timeout: 5_000 }).toEqual([id]);
    release();
    await r.idle();
  });

  it('runs every job exactly once when two runners work the same queue', async () => {
    const k = kind();
    const runs = new Map<number, number>();
    for (const concurrency of [3, 3]) {
      const r = runner({ concurrency });
      r.handle(k, async (j) => {
        runs.set(j.id, (runs.get(j.id) ?? 0) + 1);
        await new Promise((x) => setTimeout(x, 2));
      });
    }
    const ids = await enqueue(k, Array.from({ length: 60 }, (_, n) => ({ n })));
    for (const r of runners) r.start();
    for (let i = 0; i < 5; i += 1) await Promise.all(runners.map((r) => r.idle()));
    expect([...runs.keys()].sort((a, b) => a - b)).toEqual(ids);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('the job catalogue', () => {
  const ExportJob = kind({}, Type.Object({ exportId: Type.Integer({ minimum: 1 }), format: Type.Union([Type.Literal('csv'), Type.Literal('json')]) }, { additionalProperties: false }));

  it('refuses a payload that does not match the schema when it is queued, and the transaction queues nothing', async () => {
    const bad = { exportId: 'seven', format: 'csv' } as unknown as { exportId: number; format: 'csv' };
    await expect(inTransaction(db(), (tx) => ExportJob.enqueue(tx, bad, { workspaceId: null }))).rejects.toThrow(
      `A "${ExportJob.kind}" job was queued with a payload that does not match its schema (/exportId: Expected integer)`,
    );
    const extra = { exportId: 1, format: 'csv', email: 'a@b.test' } as unknown as { exportId: number; format: 'csv' };
    await expect(inTransaction(db(), (tx) => ExportJob.enqueueMany(tx, [{ exportId: 2, format: 'json' }, extra], { workspaceId: null }))).rejects.toThrow(/\/email: Unexpected property/);
    expect(await listJobs(db(), { job: ExportJob })).toHaveLength(0);
  });

  it('fails a job whose stored payload no longer matches at once, with the reason, without running the handler', async () => {
    const r = runner();
    let runs = 0;
    r.handle(ExportJob, async ({ payload }) => void (runs += payload.exportId));
    const id = await inTransaction(db(), (tx) => ExportJob.enqueue(tx, { exportId: 1, format: 'csv' }, { workspaceId: null }));
    // Written by an older version whose payload had another shape.
    await storePayload(db(), id, { export: 1, format: 'xlsx' });
    r.start();
    await r.idle();
    expect(runs).toBe(0);
    expect(await job(id)).toMatchObject({
      state: 'failed',
      attempts: 1,
      last_error: `the stored payload no longer matches the "${ExportJob.kind}" job's schema (/exportId: Expected required property)`,
    });
  });

  it('hands the handler the payload it was queued with, typed', async () => {
    const r = runner();
    const seen: unknown[] = [];
    r.handle(ExportJob, async (j) => void seen.push([j.payload.format, j.workspaceId]));
    r.start();
    await inTransaction(db(), (tx) => ExportJob.enqueue(tx, { exportId: 3, format: 'json' }, { workspaceId: null }));
    await r.idle();
    expect(seen).toEqual([['json', null]]);
  });

  it('declares each kind once, under an "<area>.<name>" name', () => {
    expect(() => defineJob(ExportJob.kind, Type.Object({}))).toThrow(`The job kind "${ExportJob.kind}" is defined twice`);
    expect(() => defineJob('Export', Type.Object({}))).toThrow('The job kind "Export" is not of the form "<area>.<name>"');
  });

  it('refuses a second handler for a kind', () => {
    const r = runner();
    r.handle(ExportJob, async () => undefined);
    expect(() => r.handle(ExportJob, async () => undefined)).toThrow(`A handler for job kind "${ExportJob.kind}" is registered twice`);
  });
});

const HELLO_EMAIL = defineEmail({
  name: `test_hello_${unique()}`,
  payload: Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
  render: async ({ n }) => ({ to: `a${n}@cust.test`, subject: 'Hi', text: `Body ${n}` }),
});

describe('e-mail jobs', () => {
  it('renders a queued e-mail when it runs, sends it with the job id and keeps no payload', async () => {
    const r = runner();
    const transport = new MemoryTransport();
    registerMailJobs(r, transport, { from: 'Patchbay <noreply@patchbay.test>', context: { db: db(), tokens: new LinkTokens(Buffer.alloc(32, 1)), urls: { publicBaseUrl: '', portalUrl: '' } } });
    r.start();
    const id = await inTransaction(db(), (tx) => enqueueEmail(tx, null, HELLO_EMAIL, { n: 1 }));
    expect((await findJob(db(), id))?.payload).toEqual({ kind: HELLO_EMAIL.name, ref: { n: 1 } });
    await r.idle();
    expect(transport.sent).toEqual([{ id, from: 'Patchbay <noreply@patchbay.test>', to: 'a1@cust.test', subject: 'Hi', text: 'Body 1' }]);
    expect(await findJob(db(), id)).toMatchObject({ state: 'succeeded', payload: {}, result: { kind: HELLO_EMAIL.name, transport: 'memory' } });
  });
});

describe('mail transports', () => {
  const FROM = 'Patchbay <noreply@patchbay.test>';
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
      expect(lines.map((l) => JSON.parse(l))).toEqual([1, 2].map((id) => ({ ...email(id), sentAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) })));
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
});
