import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../client/api-client.js';
import { seedWorkspace, useTestApp, type SeededWorkspace } from '../helpers/app.js';

// Drives the API over HTTP through the client generated from the committed docs/openapi.json
// (openapi-typescript + openapi-fetch): what a consumer of the document gets.
const ctx = useTestApp();
let baseUrl: string;
let ws: SeededWorkspace;

beforeAll(async () => {
  await ctx().app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
  ws = await seedWorkspace(ctx());
});

describe('the generated typed client', () => {
  it('imports customers and finds them again in the list', async () => {
    const client = createApiClient(baseUrl, ws.owner);
    const email = `typed-${ws.suffix}@client.test`;
    const imported = await client.POST('/api/developer/customers/import', {
      body: { customers: [{ email, firstName: 'Tia', lastName: 'Typed', productId: ws.ids.products.p1 }] },
    });
    expect(imported.response.status).toBe(201);
    expect(imported.data?.insertedCount).toBe(1);

    const list = await client.GET('/api/developer/customers', { params: { query: { search: 'typed-', limit: 5 } } });
    expect(list.response.status).toBe(200);
    expect(list.data?.rows.map((row) => row.email)).toEqual([email]);
    expect(list.data?.rows[0]?.product_ids).toEqual([ws.ids.products.p1]);
    expect(list.response.headers.get('x-request-id')).toBeTruthy();
  });

  it('gets errors as typed problem details', async () => {
    const client = createApiClient(baseUrl, ws.owner);
    const missing = await client.DELETE('/api/developer/customers/{customerId}', { params: { path: { customerId: 2147483647 } }, body: { confirm: true } });
    expect(missing.response.status).toBe(404);
    expect(missing.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(missing.error?.code).toBe('NOT_FOUND');

    const anonymous = await createApiClient(baseUrl).GET('/api/developer/customers', {});
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error?.code).toBe('UNAUTHENTICATED');
  });

  it('reaches public routes without a credential', async () => {
    const health = await createApiClient(baseUrl).GET('/healthz');
    expect(health.data).toEqual({ status: 'ok' });
  });
});
