import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTarget, parseAllowList, refusedRange, systemResolver } from '../../src/platform/net/address-policy.js';
import { bearer, buildTestApp, seedWorkspace, type TestContext, unique } from '../helpers/app.js';
import { Receiver } from './receiver.js';

// Server-side request forgery: where deliveries may go, checked when an endpoint is written and
// again at every attempt (a name may resolve elsewhere by then), and the connection made to the
// address that was checked. The app here allows one host by name only, so loopback is refused
// unless reached through that name.

describe('the address policy (ipaddr.js ranges)', () => {
  const none = parseAllowList([]).allowList;
  it.each([
    ['IPv4 loopback', '127.0.0.1', 'loopback'],
    ['another loopback address', '127.8.9.10', 'loopback'],
    ['private 10/8', '10.0.0.1', 'private'],
    ['private 172.16/12', '172.16.5.4', 'private'],
    ['private 192.168/16', '192.168.1.1', 'private'],
    ['cloud metadata (link-local)', '169.254.169.254', 'linkLocal'],
    ['carrier-grade NAT (Alibaba metadata)', '100.100.100.200', 'carrierGradeNat'],
    ['unspecified', '0.0.0.0', 'unspecified'],
    ['broadcast', '255.255.255.255', 'broadcast'],
    ['multicast', '224.0.0.1', 'multicast'],
    ['documentation range', '192.0.2.1', 'reserved'],
    ['IPv6 loopback', '::1', 'loopback'],
    ['IPv6 unspecified', '::', 'unspecified'],
    ['IPv6 link-local', 'fe80::1', 'linkLocal'],
    ['IPv6 unique-local (AWS metadata)', 'fd00:ec2::254', 'uniqueLocal'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1', 'loopback'],
    ['IPv4-mapped private', '::ffff:10.0.0.1', 'private'],
    ['NAT64 of loopback', '64:ff9b::7f00:1', 'rfc6052'],
    ['6to4 of loopback', '2002:7f00:1::', '6to4'],
    ['Teredo', '2001::1', 'teredo'],
  ])('refuses %s (%s)', (_label, address, range) => {
    expect(refusedRange(address, none)).toBe(range);
  });

  it.each([['public IPv4', '93.184.216.34'], ['public IPv6', '2606:2800:220:1::1'], ['IPv4-mapped public', '::ffff:8.8.8.8']])('allows %s', (_label, address) => {
    expect(refusedRange(address, none)).toBeNull();
  });

  it('allows what the allow-list names: addresses, CIDR ranges (mapped addresses too), host names', () => {
    const { allowList, problems } = parseAllowList(['127.0.0.1', '10.20.0.0/16', 'fd00::/8', 'Receiver.Internal', '[::1]']);
    expect(problems).toEqual([]);
    expect(refusedRange('127.0.0.1', allowList)).toBeNull();
    expect(refusedRange('127.0.0.2', allowList)).toBe('loopback');
    expect(refusedRange('10.20.3.4', allowList)).toBeNull();
    expect(refusedRange('::ffff:10.20.3.4', allowList)).toBeNull();
    expect(refusedRange('10.21.0.1', allowList)).toBe('private');
    expect(refusedRange('fd12::1', allowList)).toBeNull();
    expect(refusedRange('::1', allowList)).toBeNull();
    expect(allowList.hosts.has('receiver.internal')).toBe(true);
    expect(parseAllowList(['not a host!', '10.0.0.0/40']).problems).toHaveLength(2);
  });

  it('refuses a name when any of its addresses is refused, and connects to the checked one', async () => {
    const resolve = async (host: string) =>
      host === 'mixed.test' ? [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }] : [{ address: '93.184.216.34', family: 4 }];
    await expect(checkTarget(new URL('https://mixed.test/'), parseAllowList([]).allowList, resolve)).rejects.toThrow(/10\.0\.0\.1, a private address/);
    await expect(checkTarget(new URL('https://public.test/'), parseAllowList([]).allowList, resolve)).resolves.toMatchObject({ address: '93.184.216.34', family: 4 });
  });

  it('refuses localhost through the system resolver', async () => {
    await expect(checkTarget(new URL('https://localhost:8443/'), parseAllowList([]).allowList, systemResolver)).rejects.toThrow(/localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
  });
});

describe('webhook deliveries and server-side request forgery', () => {
  const receiver = new Receiver();
  // What the injected resolver answers now, per name: tests move a name to another address.
  const dns = new Map<string, string>();
  let ctx: TestContext;

  beforeAll(async () => {
    await receiver.start();
    ctx = await buildTestApp({
      webhooks: {
        allowedHosts: ['receiver.test'],
        retryScheduleMs: [],
        resolve: async (host) => {
          const address = dns.get(host);
          if (!address) throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' });
          return [{ address, family: address.includes(':') ? 6 : 4 }];
        },
      },
    });
  });
  afterAll(async () => {
    await ctx.app.close();
    await ctx.database.close();
    await receiver.stop();
  });

  const create = (ws: { owner: string }, url: string) =>
    ctx.app.inject({ method: 'POST', url: '/api/developer/webhooks/endpoints', headers: bearer(ws.owner), payload: { url, events: ['*'] } });

  it('refuses at creation a name that resolves to 127.0.0.1, localhost, IPv6 loopback and an IPv4-mapped loopback', async () => {
    const ws = await seedWorkspace(ctx);
    dns.set('evil.test', '127.0.0.1');
    dns.set('localhost', '127.0.0.1');
    for (const url of ['https://evil.test/hooks', 'https://localhost/hooks', 'https://[::1]/hooks', 'https://[::ffff:127.0.0.1]/hooks', `http://127.0.0.1:${receiver.port}/hooks`]) {
      const res = await create(ws, url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().code).toBe('WEBHOOK_URL_NOT_ALLOWED');
    }
    expect((await create(ws, 'https://evil.test/hooks')).json().detail).toMatch(/resolves to 127\.0\.0\.1, a loopback address/);
  });

  it('delivers to a host allowed by name at the address the resolver gave, never asking the system again', async () => {
    const ws = await seedWorkspace(ctx);
    dns.set('receiver.test', '127.0.0.1');
    const path = `/ok-${unique()}`;
    const res = await create(ws, `http://receiver.test:${receiver.port}${path}`);
    expect(res.statusCode).toBe(201);
    receiver.secrets = [res.json().secret];
    await ctx.app.inject({ method: 'POST', url: `/api/developer/webhooks/endpoints/${res.json().id}/test`, headers: bearer(ws.owner) });
    await ctx.app.webhooks.idle();
    // The system resolver does not know receiver.test: the request arrived because the checked address was used.
    const got = receiver.received.filter((r) => r.path === path);
    expect(got).toHaveLength(1);
    expect(got[0]!.headers.host).toBe(`receiver.test:${receiver.port}`);
    expect(got[0]!.verifiedWith).toEqual([0]);
  });

  it('checks again at delivery: a name that moved to 127.0.0.1 or ::1 after creation is refused, and nothing is sent', async () => {
    for (const loopback of ['127.0.0.1', '::1', '169.254.169.254']) {
      const ws = await seedWorkspace(ctx);
      const name = `rebind-${unique()}.test`;
      dns.set(name, '93.184.216.34');
      const res = await create(ws, `https://${name}:${receiver.port}/rebound`);
      expect(res.statusCode, loopback).toBe(201);
      // DNS rebinding: the name now answers with an internal address.
      dns.set(name, loopback);
      const before = receiver.received.length;
      await ctx.app.inject({ method: 'POST', url: `/api/developer/webhooks/endpoints/${res.json().id}/test`, headers: bearer(ws.owner) });
      await ctx.app.webhooks.idle();
      expect(receiver.received.length).toBe(before);
      const [row] = (await ctx.app.inject({ method: 'GET', url: `/api/developer/webhooks/endpoints/${res.json().id}/deliveries`, headers: bearer(ws.owner) })).json().rows;
      expect(row).toMatchObject({ status: 'failed', last_status_code: null });
      expect(row.error).toMatch(new RegExp(`^refused: ${name} resolves to ${loopback.replace(/[.:]/g, '\\$&')}`));
    }
  });

  it('accepts a name that does not resolve yet, and fails its delivery until it does', async () => {
    const ws = await seedWorkspace(ctx);
    const res = await create(ws, `https://later-${unique()}.test/hooks`);
    expect(res.statusCode).toBe(201);
    await ctx.app.inject({ method: 'POST', url: `/api/developer/webhooks/endpoints/${res.json().id}/test`, headers: bearer(ws.owner) });
    await ctx.app.webhooks.idle();
    const [row] = (await ctx.app.inject({ method: 'GET', url: `/api/developer/webhooks/endpoints/${res.json().id}/deliveries`, headers: bearer(ws.owner) })).json().rows;
    expect(row.error).toMatch(/does not resolve \(ENOTFOUND\)/);
  });
});
