import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../src/platform/storage/storage.js';
import { bearer, buildTestApp, seedWorkspace, TEST_LICENSE_KEY } from '../helpers/app.js';
import { describeRequest, type FuzzContext, type FuzzOperation, type FuzzRequest, operationsOf, requestArbitrary } from '../helpers/fuzz.js';
import { multipart } from '../helpers/multipart.js';

// Generated requests for every operation of the served OpenAPI document, sent as a workspace
// owner with every permission so they reach validation and the handlers: nothing may answer 5xx,
// and every 4xx is problem+json with a code and a request id. Fixed seed and few runs by default;
// a longer run: FUZZ_RUNS=500 FUZZ_SEED=$RANDOM npx vitest run test/platform/fuzz.test.ts

const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
const SEED = Number(process.env.FUZZ_SEED ?? 20_250_611);
const REQUEST_TIMEOUT_MS = 30_000;

const storageDir = mkdtempSync(path.join(os.tmpdir(), 'patchbay-fuzz-'));
// Built at collection time: the tests are the document's operations.
const { app, database } = await buildTestApp({ storage: new LocalStorage(storageDir) });
const operations: FuzzOperation[] = operationsOf((await app.inject({ method: 'GET', url: '/openapi.json' })).json());

afterAll(async () => {
  await app.close();
  await database.close();
  rmSync(storageDir, { recursive: true, force: true });
});

/** The same seed for an operation whatever the operations before it. */
function seedOf(key: string): number {
  let hash = 0x811c9dc5;
  for (const char of key) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return (hash ^ SEED) | 0;
}

let fuzz: FuzzContext;
/** A fresh buyer session: a fuzzed sign-out ends the one in use, and the portal routes after it need another. */
let newBuyerSession: () => Promise<string>;
/** Likewise a console session, for the session routes (a fuzzed sign-out ends the one in use). */
let newConsoleSession: () => Promise<string>;
let sent = 0;
/** Answers per operation and status, printed with FUZZ_REPORT=1 (to see what the run reached). */
const tally = new Map<string, Map<string, number>>();

beforeAll(async () => {
  const ctx = { app, database };
  const ws = await seedWorkspace(ctx, {
    customers: [{ key: 'c1', firstName: 'Ada' }, { key: 'c2' }],
    orders: [{ key: 'o', customer: 'c1', items: [{ product: 'p1', serial: 's1' }] }],
    serials: [
      { key: 's1', product: 'p1', customer: 'c1', order: 'o' },
      { key: 's2', product: 'p2' },
    ],
    resellers: [{ key: 'r', name: 'Fuzz Reseller' }],
    files: [{ key: 'f', product: 'p1', filename: 'a.zip', url: 'https://cdn.example/a.zip' }],
  });
  // Records of another workspace: a fuzzed id may name them, and must still get a 404.
  const other = await seedWorkspace(ctx, { customers: [{ key: 'c' }], serials: [{ key: 's', product: 'p1', customer: 'c' }] });
  // The buyers' portal routes are sent as buyer c1 of this workspace, so they reach its handlers too.
  const { CustomerSessions } = await import('../../src/modules/customer-portal/index.js');
  const sessions = new CustomerSessions(database.db, 'http://patchbay.test');
  newBuyerSession = async () => (await sessions.operatorSession(String(ws.workspaceId), `c0-${ws.suffix}@cust.test`))!.token;
  const buyer = await newBuyerSession();
  // The console session routes are sent with the owner's session; the workspace routes keep the owner's JWT.
  const { createAccounts } = await import('../../src/modules/accounts/index.js');
  const { LinkTokens } = await import('../../src/platform/mail/link-tokens.js');
  const consoleSessions = createAccounts(database.db, new LinkTokens(TEST_LICENSE_KEY)).sessions;
  newConsoleSession = async () => (await consoleSessions.signIn(await consoleSessions.bannerLink(ws.ids.accounts.owner!, 60_000))).token;
  const consoleSession = await newConsoleSession();
  const apiToken = await app.inject({ method: 'POST', url: '/api/developer/api-tokens', headers: bearer(ws.owner), payload: { name: 'fuzz' } });
  const payoutRun = await app.inject({ method: 'POST', url: '/api/developer/partners/payouts/runs', headers: bearer(ws.owner), payload: {} });
  const seat = await app.inject({ method: 'POST', url: '/api/licensing/v1/activate', payload: { productAppId: ws.appIds.p1, serial: ws.serialCodes.s1, machineId: 'machine-1' } });
  const owner = bearer(ws.owner);
  const p1 = ws.ids.products.p1!;
  const upload = multipart([{ name: 'file', value: Buffer.from('managed bytes'), filename: 'managed.zip' }]);
  const managed = await app.inject({ method: 'POST', url: `/api/developer/products/${p1}/files`, headers: { ...owner, ...upload.headers }, payload: upload.payload });
  expect(managed.statusCode, managed.body).toBe(201);
  const fileId = managed.json().id as string;
  const version = await app.inject({ method: 'POST', url: `/api/developer/products/${p1}/versions`, headers: owner, payload: { version: '1.0.0' } });
  expect(version.statusCode, version.body).toBe(201);
  await app.inject({ method: 'POST', url: `/api/developer/products/${p1}/reviews/import`, headers: owner, payload: { reviews: [{ rating: 4, title: 'Fine' }] } });
  const [review] = (await app.inject({ method: 'GET', url: `/api/developer/products/${p1}/reviews`, headers: owner })).json().rows;
  const queued = await app.inject({
    method: 'POST',
    url: '/api/developer/customers/import',
    headers: { ...owner, prefer: 'respond-async' },
    payload: { customers: [{ email: `fuzz-${ws.suffix}@x.test` }] },
  });
  expect(queued.statusCode, queued.body).toBe(202);
  const link = new URL((await app.inject({ method: 'POST', url: `/api/developer/products/${p1}/files/${fileId}/link`, headers: owner })).json().url, 'http://x');
  const [, , , kind, id] = link.pathname.split('/');

  const productIds = Object.values(ws.ids.products);
  const emails = [`c0-${ws.suffix}@cust.test`, `c1-${ws.suffix}@cust.test`];
  fuzz = {
    token: ws.owner,
    tokens: { customerBearer: buyer, bearer: ws.owner, developerSessionBearer: consoleSession },
    workspaceIds: [ws.workspaceId, other.workspaceId],
    known: {
      productId: [...productIds, other.ids.products.p1!],
      product_id: productIds,
      productIds: [productIds.join(','), `${productIds[0]},${other.ids.products.p1}`],
      productName: Object.keys(ws.ids.products).map((key) => `Product ${key} ${ws.suffix}`),
      productAppId: [...Object.values(ws.appIds), other.appIds.p1!],
      customerId: [ws.ids.customers.c1!, ws.ids.customers.c2!, other.ids.customers.c!],
      serialId: [ws.ids.serials.s1!, ws.ids.serials.s2!, other.ids.serials.s!],
      serial: [...Object.values(ws.serialCodes), other.serialCodes.s!],
      serialCode: Object.values(ws.serialCodes),
      email: emails,
      customerEmail: emails,
      resellerId: [ws.ids.resellerIds.r!, 'none'],
      fileId: [fileId, ws.ids.files.f!],
      versionId: [version.json().id],
      reviewId: [review.id],
      importId: [Number(String(queued.headers.location).split('/').pop())],
      orderId: [ws.ids.orders.o!, 1],
      memberId: [ws.ids.accounts.owner!, other.ids.accounts.owner!],
      tokenId: [apiToken.json().id, 1],
      runId: [payoutRun.json().id, 1],
      activationId: [seat.json().activation.id, 1],
      workspace: [String(ws.workspaceId), 'no-such-store'],
      kind: [kind!],
      id: [id!],
      expires: [link.searchParams.get('expires')!],
      signature: [link.searchParams.get('signature')!],
      machineId: ['machine-1', 'machine-2'],
      currency: ['usd', 'eur', 'jpy'],
    },
  };
});

async function send(req: FuzzRequest): Promise<LightMyRequestResponse> {
  sent += 1;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
  });
  try {
    const res = await Promise.race([
      app.inject({ method: req.method as 'GET', url: req.url, headers: req.headers, ...(req.payload === undefined ? {} : { payload: req.payload }) }),
      timeout,
    ]);
    if (req.method === 'DELETE' && req.url.startsWith('/api/customer-portal/session') && res.statusCode === 200) fuzz.tokens!.customerBearer = await newBuyerSession();
    if (req.method === 'DELETE' && req.url.startsWith('/api/developer/session') && res.statusCode === 200) fuzz.tokens!.developerSessionBearer = await newConsoleSession();
    return res;
  } finally {
    clearTimeout(timer);
  }
}

/** What is wrong with an answer, or nothing. */
function complaints(res: LightMyRequestResponse): string[] {
  const found: string[] = [];
  if (res.statusCode >= 500) found.push(`answered ${res.statusCode}`);
  if (res.statusCode >= 400 && res.statusCode < 500) {
    const type = String(res.headers['content-type'] ?? '');
    if (!/^application\/problem\+json/.test(type)) found.push(`a ${res.statusCode} with content-type "${type}", not application/problem+json`);
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      found.push(`a ${res.statusCode} whose body is not JSON`);
    }
    const problem = (body ?? {}) as { code?: unknown; requestId?: unknown };
    if (body !== undefined && typeof problem.code !== 'string') found.push(`a ${res.statusCode} without a string "code"`);
    if (body !== undefined && typeof problem.requestId !== 'string') found.push(`a ${res.statusCode} without a string "requestId"`);
  }
  return found;
}

function count(key: string, res: LightMyRequestResponse): void {
  const counts = tally.get(key) ?? new Map<string, number>();
  const label = res.statusCode >= 400 ? `${res.statusCode} ${res.body.match(/"code":"(\w+)"/)?.[1] ?? '?'}` : String(res.statusCode);
  counts.set(label, (counts.get(label) ?? 0) + 1);
  tally.set(key, counts);
}

describe('fuzzing every operation of the OpenAPI document', () => {
  it('finds the operations to fuzz in the served document', () => {
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.some((op) => op.body?.content['multipart/form-data'])).toBe(true);
  });

  for (const op of operations) {
    const key = `${op.method} ${op.path}`;
    it(
      `${key} answers below 500, and every 4xx as problem+json`,
      async () => {
        await fc.assert(
          fc.asyncProperty(requestArbitrary(op, fuzz), async (req) => {
            let res: LightMyRequestResponse;
            try {
              res = await send(req);
            } catch (error) {
              throw new Error(`${key}: ${(error as Error).message} (FUZZ_SEED=${SEED})\n--- request ---\n${describeRequest(req)}`);
            }
            const found = complaints(res);
            count(key, res);
            if (found.length > 0) {
              throw new Error(
                `${key}: ${found.join('; ')} (FUZZ_SEED=${SEED})\n--- request ---\n${describeRequest(req)}\n--- response ---\n` +
                  `${res.statusCode} ${String(res.headers['content-type'] ?? '')}\n${res.body.slice(0, 2000)}`,
              );
            }
          }),
          { numRuns: RUNS, seed: seedOf(key) },
        );
      },
      Math.max(60_000, RUNS * 2_000),
    );
  }

  it('still serves after the run', async () => {
    if (process.env.FUZZ_REPORT) {
      for (const [key, counts] of tally) console.info(`${key}\n  ${[...counts].sort((a, b) => b[1] - a[1]).map(([label, n]) => `${label}: ${n}`).join(', ')}`);
    }
    expect(sent).toBeGreaterThan(0);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/api/developer/products', headers: bearer(fuzz.token) })).statusCode).toBe(200);
  });
});
