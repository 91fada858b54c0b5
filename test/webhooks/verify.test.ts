import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventDefinitions } from '../../src/modules/webhooks/webhooks.events.js';
import { bearer, seedWorkspace, unique, useTestApp } from '../helpers/app.js';
import { Receiver } from './receiver.js';

// What docs/api/webhooks.md tells a receiver to do, run against real deliveries: verifying with
// the Standard Webhooks library and by hand; and the docs and the OpenAPI document list every
// event type of the catalogue with its fields.

const ctx = useTestApp({ webhooks: { allowedHosts: ['127.0.0.1'] } });
const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

// The docs' by-hand verifier, as printed there.
function verify(secret: string, headers: Record<string, string>, rawBody: string) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  if (!id || !timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest('base64');
  return headers['webhook-signature']!.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    return version === 'v1' && signature!.length === expected.length && timingSafeEqual(Buffer.from(signature!), Buffer.from(expected));
  });
}

describe('verifying a delivery as the docs show', () => {
  it('verifies with the library and by hand, and refuses a changed body, another secret and an old timestamp', async () => {
    const ws = await seedWorkspace(ctx());
    const path = `/v-${unique()}`;
    const created = (await ctx().app.inject({ method: 'POST', url: '/api/developer/webhooks/endpoints', headers: bearer(ws.owner), payload: { url: receiver.url(path), events: ['*'] } })).json();
    await ctx().app.inject({ method: 'POST', url: `/api/developer/webhooks/endpoints/${created.id}/test`, headers: bearer(ws.owner) });
    await ctx().app.webhooks.idle();
    const [got] = receiver.received.filter((r) => r.path === path);
    const headers = got!.headers as Record<string, string>;
    expect(new Webhook(created.secret).verify(got!.body, headers)).toMatchObject({ type: 'webhook.test', workspace_id: ws.workspaceId });
    expect(verify(created.secret, headers, got!.body)).toBe(true);
    expect(verify(created.secret, headers, got!.body.replace('test', 'tost'))).toBe(false);
    const other = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    expect(verify(other, headers, got!.body)).toBe(false);
    expect(() => new Webhook(other).verify(got!.body, headers)).toThrow();
    expect(verify(created.secret, { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) }, got!.body)).toBe(false);
  });
});

describe('the documented catalogue', () => {
  const docs = fs.readFileSync(new URL('../../docs/api/webhooks.md', import.meta.url), 'utf8');
  const document = JSON.parse(fs.readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: { data: unknown } } }> } } }> };

  it.each(eventDefinitions().map((d) => [d.type, d] as const))('%s is in docs/api/webhooks.md with every field, and in the OpenAPI webhooks section', (type, definition) => {
    const row = docs.split('\n').find((line) => line.startsWith(`| \`${type}\` |`));
    expect(row, `docs/api/webhooks.md has a catalogue row for ${type}`).toBeDefined();
    for (const field of Object.keys(definition.data.properties)) expect(row, `${type}: ${field}`).toContain(`\`${field}\``);
    const schema = document.webhooks[type]?.post.requestBody.content['application/json']?.schema;
    expect(schema?.properties.data).toEqual(JSON.parse(JSON.stringify(definition.data)));
  });
});
