import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, seedWorkspace, type SeededWorkspace, type TestContext } from '../helpers/app.js';

// Slow clients are cut off without affecting others. Real sockets: the limits live in the HTTP server.

let ctx: TestContext;
let port: number;
let ws: SeededWorkspace;

beforeAll(async () => {
  ctx = await buildTestApp({
    httpLimits: { headersTimeoutMs: 1_000, bodyTimeoutMs: 700, requestTimeoutMs: 5_000, maxConnectionsPerIp: 6, publicInflightPerIp: 3 },
  });
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as net.AddressInfo).port;
  ws = await seedWorkspace(ctx, { serials: [{ key: 's', product: 'p1' }] });
});

afterAll(async () => {
  await ctx.app.close();
  await ctx.database.close();
});

interface RawOutcome {
  data: string;
  firstByteAfterMs: number | null;
  closedAfterMs: number;
}

/** Opens a socket, writes `text`, and resolves with what came back once the server closes it. */
function rawRequest(text: string, timeoutMs = 10_000): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    let firstByteAfterMs: number | null = null;
    socket.on('data', (chunk) => {
      firstByteAfterMs ??= Date.now() - started;
      data += chunk;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ data, firstByteAfterMs, closedAfterMs: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`socket still open after ${timeoutMs} ms; received: ${data.slice(0, 200)}`));
    }, timeoutMs).unref();
  });
}

const partialBody = () => {
  const body = JSON.stringify({ productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'slow-machine' });
  return `POST /api/licensing/v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`;
};

const validate = () =>
  fetch(`http://127.0.0.1:${port}/api/licensing/v1/validate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'm' }),
  });

describe('HTTP timeouts and per-address caps', () => {
  it('closes a request whose body does not arrive in time with a 408 problem, while others are served', async () => {
    const slow = rawRequest(partialBody());
    const meanwhile = await validate();
    expect(meanwhile.status).toBe(200);
    const outcome = await slow;
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(600);
    expect(outcome.closedAfterMs).toBeLessThan(3_000);
    expect(outcome.data).toMatch(/^HTTP\/1\.1 408 /);
    expect(outcome.data).toMatch(/application\/problem\+json/);
    expect(outcome.data).toContain('"code":"REQUEST_TIMEOUT"');
  });

  it('closes a connection whose headers do not arrive in time', async () => {
    const outcome = await rawRequest('POST /api/licensing/v1/validate HTTP/1.1\r\nHost: x\r\n');
    expect(outcome.closedAfterMs).toBeLessThan(5_000);
    expect(outcome.data === '' || /^HTTP\/1\.1 408 /.test(outcome.data)).toBe(true);
  });

  it('refuses public requests beyond the in-flight cap of one address with 429 at once', async () => {
    const slow = [rawRequest(partialBody()), rawRequest(partialBody()), rawRequest(partialBody())];
    await new Promise((resolve) => setTimeout(resolve, 150));
    const fourth = await rawRequest(partialBody());
    expect(fourth.data).toMatch(/^HTTP\/1\.1 429 /);
    expect(fourth.data).toContain('"code":"RATE_LIMITED"');
    expect(fourth.firstByteAfterMs).toBeLessThan(400);
    await Promise.all(slow);
    // The held slots are released when those requests end.
    expect((await validate()).status).toBe(200);
  });

  it('gives back the in-flight slot of a request whose client went away', async () => {
    // Whole requests whose clients disconnect before the answer, at every stage: right after
    // sending, and while the body is still arriving. (Each used to keep its slot for good.)
    const body = JSON.stringify({ productAppId: ws.appIds.p1, serial: ws.serialCodes.s, machineId: 'gone' });
    const whole = `POST /api/licensing/v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    for (let i = 0; i < 12; i += 1) {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(i % 2 === 0 ? whole : partialBody());
      await new Promise((resolve) => setTimeout(resolve, i % 3 === 0 ? 0 : 20));
      socket.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (let i = 0; i < 4; i += 1) expect((await validate()).status).toBe(200);
  });

  it('closes connections of one address beyond the connection cap', async () => {
    const sockets: net.Socket[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 9; i += 1) {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      const index = i;
      closed[index] = false;
      socket.on('close', () => (closed[index] = true));
      sockets.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    // At most 6 connections of this address stay open (a keep-alive socket of an earlier request may be one of them).
    expect(closed.filter((c) => !c).length).toBeLessThanOrEqual(6);
    expect(closed.filter(Boolean).length).toBeGreaterThanOrEqual(3);
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await validate()).status).toBe(200);
  });
});
