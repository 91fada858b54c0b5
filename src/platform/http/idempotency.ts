import { createHash, type Hash } from 'node:crypto';
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { AppError, defineErrors, type CodesOf, type ErrorSpec } from './errors.js';

const idempotencyErrorsSpecs = {
  INVALID_IDEMPOTENCY_KEY: { status: 400, title: 'Idempotency-Key is malformed', description: '`Idempotency-Key` is not 1–255 printable ASCII characters' },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, title: 'A request with this Idempotency-Key is still running', description: 'the first request with this `Idempotency-Key` is still running; retry after `Retry-After`' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'This Idempotency-Key was used for a different request', description: 'this `Idempotency-Key` was used for a different request (method, URL or body)' },
} as const satisfies Record<string, ErrorSpec>;
export const IdempotencyErrors = defineErrors(idempotencyErrorsSpecs);

declare module './errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof idempotencyErrorsSpecs> {}
}

/** How long a first answer is kept for replays. */
export const IDEMPOTENCY_TTL_HOURS = 24;
/** A first request that has not answered after this long (its process died) no longer blocks its key. */
const RUNNING_LOCK_SECONDS = 600;
const KEY = /^[\x21-\x7e]{1,255}$/;
const MUTATING = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
/** Answer headers that are part of the answer (the request id, rate-limit and CORS headers are not). */
const KEPT_HEADERS = ['content-type', 'location', 'content-disposition', 'deprecation', 'sunset', 'link', 'idempotent-replayed'];

interface KeyState {
  owner: string;
  key: string;
  hash?: Hash;
  /** A multipart request: the import path checks the key once it has read the content. */
  deferred?: boolean;
  /** Set once this request holds the key; its answer is stored when it is sent. */
  holding?: boolean;
  payload?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: KeyState | null;
  }
  interface FastifyInstance {
    idempotencyDb: Db;
  }
}

/**
 * Claims the request's key for a request with this content digest: 'proceed' (run it; the answer
 * will be kept), or 'replayed' (the first answer was sent; the handler must return the reply).
 * Throws 409 IDEMPOTENCY_KEY_IN_USE or 422 IDEMPOTENCY_KEY_REUSED.
 */
export async function claimIdempotencyKey(request: FastifyRequest, reply: FastifyReply, digest: string): Promise<'proceed' | 'replayed'> {
  const state = request.idempotency;
  if (!state?.deferred) return 'proceed';
  state.deferred = false;
  return claim(request, reply, digest);
}

async function claim(request: FastifyRequest, reply: FastifyReply, digest: string): Promise<'proceed' | 'replayed'> {
  const db = request.server.idempotencyDb;
  const state = request.idempotency!;
  const { owner, key } = state;
  const fingerprint = createHash('sha256').update(`${request.method}\n${request.url}\n${digest}`).digest('hex');
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const inserted = await sql<{ key: string }>`
      insert into idempotency_keys (owner, key, fingerprint, locked_until, expires_at)
      values (${owner}, ${key}, ${fingerprint}, now() + make_interval(secs => ${RUNNING_LOCK_SECONDS}), now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS}))
      on conflict (owner, key) do nothing
      returning key`.execute(db);
    if (inserted.rows.length > 0) {
      state.holding = true;
      return 'proceed';
    }
    const existing = await db.selectFrom('idempotency_keys').where('owner', '=', owner).where('key', '=', key).selectAll().executeTakeFirst();
    if (!existing) continue;
    const now = Date.now();
    const stale = new Date(existing.expires_at).getTime() < now || (existing.state === 'running' && new Date(existing.locked_until).getTime() < now);
    if (stale) {
      // Expired, or its first request died: the key is free again.
      // Deleted only if still stale (another request may have taken it over meanwhile).
      await sql`delete from idempotency_keys where owner = ${owner} and key = ${key}
        and (expires_at < now() or (state = 'running' and locked_until < now()))`.execute(db);
      continue;
    }
    if (existing.fingerprint !== fingerprint) {
      throw new AppError(IdempotencyErrors.IDEMPOTENCY_KEY_REUSED, 'This Idempotency-Key was used for a different request (method, URL or body); use a new key for a new request');
    }
    if (existing.state === 'running') {
      throw new AppError(IdempotencyErrors.IDEMPOTENCY_KEY_IN_USE, 'The first request with this Idempotency-Key is still running; retry shortly', {
        headers: { 'retry-after': '1' },
      });
    }
    await reply.code(existing.status ?? 200).headers(existing.headers ?? {}).header('idempotent-replayed', 'true').send(existing.body ?? '');
    return 'replayed';
  }
  throw new AppError(IdempotencyErrors.IDEMPOTENCY_KEY_IN_USE, 'The Idempotency-Key is contended; retry shortly', { headers: { 'retry-after': '1' } });
}

/** Who the key belongs to: keys of different callers never meet. Null: the route takes no keys. */
export type IdempotencyOwner = (request: FastifyRequest) => string | null;

function isMultipart(request: FastifyRequest): boolean {
  return String(request.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/');
}

/**
 * `Idempotency-Key` on mutating routes: the first answer (status, body, the headers that belong
 * to it) is kept for 24 hours per caller and key, with a fingerprint of the method, the URL and
 * the body. The same request again gets that answer with `Idempotent-Replayed: true`; the same
 * key with a different request answers 422 IDEMPOTENCY_KEY_REUSED; while the first is still
 * running, 409 IDEMPOTENCY_KEY_IN_USE. Server errors (5xx), and answers that say "try again"
 * (429, a retryable 409), are not kept: a retry with the key runs the request again.
 */
export function registerIdempotency(app: FastifyInstance, db: Db, ownerOf: IdempotencyOwner): void {
  app.decorateRequest('idempotency', null);
  app.decorate('idempotencyDb', db);

  // The body's digest is taken from the raw bytes as they arrive. A multipart body is read by
  // the handler itself (from the raw request), so its key is checked later, by the import path,
  // on a digest of the parsed content (see claimIdempotencyKey).
  app.addHook('preParsing', async (request, _reply, payload) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined || !MUTATING.has(request.method) || isMultipart(request)) return payload;
    const hash = createHash('sha256');
    request.idempotency = { owner: '', key: '', hash };
    const tee = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        (tee as Transform & { receivedEncodedLength: number }).receivedEncodedLength += chunk.length;
        callback(null, chunk);
      },
    });
    (tee as Transform & { receivedEncodedLength: number }).receivedEncodedLength = 0;
    payload.on('error', (error) => tee.destroy(error));
    return payload.pipe(tee);
  });

  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined || !MUTATING.has(request.method)) return;
    const owner = ownerOf(request);
    if (owner === null) return;
    if (typeof header !== 'string' || !KEY.test(header)) {
      throw new AppError(IdempotencyErrors.INVALID_IDEMPOTENCY_KEY, 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    if (isMultipart(request)) {
      request.idempotency = { owner, key: header, deferred: true };
      return;
    }
    const digest = request.idempotency?.hash ? request.idempotency.hash.digest('hex') : createHash('sha256').digest('hex');
    request.idempotency = { owner, key: header };
    if ((await claim(request, reply, digest)) === 'replayed') return reply;
  });

  const settle = async (request: FastifyRequest, reply: FastifyReply) => {
    const state = request.idempotency;
    if (!state?.holding) return;
    state.holding = false;
    const status = reply.statusCode;
    const code = /"code":"([A-Z_]+)"/.exec(state.payload ?? '')?.[1];
    const transient = status >= 500 || status === 429 || code === 'SERIALIZATION_FAILURE' || code === 'IDEMPOTENCY_KEY_IN_USE' || state.payload === undefined;
    try {
      if (transient) {
        await db.deleteFrom('idempotency_keys').where('owner', '=', state.owner).where('key', '=', state.key).where('state', '=', 'running').execute();
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      await db
        .updateTable('idempotency_keys')
        .set({ state: 'done', status, headers: JSON.stringify(headers), body: state.payload ?? '' })
        .where('owner', '=', state.owner)
        .where('key', '=', state.key)
        .execute();
    } catch (error) {
      request.log.warn({ err: { message: (error as Error).message } }, 'could not store the answer of an idempotent request');
    }
  };
  // The answer is kept before its bytes leave: a client that retries the moment it has the answer
  // gets the replay, never a 409 for a request that has already finished.
  app.addHook('onSend', async (request, reply, payload) => {
    const state = request.idempotency;
    if (state?.holding && (typeof payload === 'string' || Buffer.isBuffer(payload))) state.payload = payload.toString();
    await settle(request, reply);
    return payload;
  });
  // Also when nothing was sent (the client went away first): the handler's effects happened.
  app.addHook('onResponse', settle);
}

/** Deletes kept answers older than their 24 hours (run hourly by the job runner's maintenance). */
export async function deleteExpiredIdempotencyKeys(db: Db): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<', new Date()).executeTakeFirst();
  return Number(result.numDeletedRows);
}
