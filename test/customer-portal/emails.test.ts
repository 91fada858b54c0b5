import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileTransport, MemoryTransport } from '../../src/platform/mail/transport.js';
import { sale, signedEvent, WEBHOOK_SECRET } from '../checkout/checkout-helpers.js';
import { bearer, seedWorkspace, type TestContext, unique, useTestApp } from '../helpers/app.js';

// The e-mails buyers get: the purchase and grant e-mails carry the workspace's name and a link to
// the buyer's portal, with an HTML part (MJML) next to the text; the transports send both.

const transport = new MemoryTransport();
const ctx = useTestApp({ mail: { transport }, checkout: { webhookSecrets: [WEBHOOK_SECRET] } });

const grant = (c: TestContext, token: string, body: object) => c.app.inject({ method: 'POST', url: '/api/developer/purchases/manual-grant', headers: bearer(token), payload: body });

describe('purchase and grant e-mails', () => {
  it('a grant e-mail names the workspace, links to the buyer’s portal and has an HTML part', async () => {
    const slug = `mail-${unique()}`;
    const ws = await seedWorkspace(ctx(), { slug });
    const email = `grant-${ws.suffix}@cust.test`;
    const granted = await grant(ctx(), ws.owner, { productId: ws.ids.products.p1, email, reason: 'gift', sendProductPurchaseEmails: true });
    expect(granted.statusCode, granted.body).toBe(201);
    await ctx().app.jobs.idle();
    const mail = transport.sent.find((m) => m.to === email)!;
    const serial = granted.json().serials[0].serial as string;
    const portal = `http://patchbay.test/portal/${slug}`;
    expect(mail.text).toContain(`Workspace ${ws.suffix} gave you access to Product p1 ${ws.suffix}.`);
    expect(mail.text).toContain(`Your serial: ${serial}`);
    expect(mail.text).toContain(portal);
    expect(mail.html).toMatch(/^<!doctype html>/i);
    expect(mail.html).toContain(`Workspace ${ws.suffix}`);
    expect(mail.html).toContain(serial);
    expect(mail.html).toContain(`href="${portal}"`);
  });

  it('a receipt of the managed checkout names the workspace and links to the portal; no link while the portal is off', async () => {
    const ws = await seedWorkspace(ctx());
    const event = sale(ws, [{ product: 'p2', subtotal: 4900 }]);
    expect((await signedEvent(ctx(), event)).statusCode).toBe(200);
    await ctx().app.jobs.idle();
    const buyer = (event.data as { customer: { email: string } }).customer.email;
    const receipt = transport.sent.find((m) => m.to === buyer)!;
    expect(receipt.subject).toBe(`Your purchase of Product p2 ${ws.suffix}`);
    expect(receipt.text).toContain(`(49.00 USD) from Workspace ${ws.suffix}`);
    expect(receipt.text).toContain(`http://patchbay.test/portal/${ws.workspaceId}`);
    expect(receipt.html).toContain(`href="http://patchbay.test/portal/${ws.workspaceId}"`);

    await ctx().app.inject({ method: 'PATCH', url: '/api/developer/customer-portal', headers: bearer(ws.owner), payload: { enabled: false } });
    const quiet = sale(ws, [{ product: 'p3', subtotal: 100 }]);
    await signedEvent(ctx(), quiet);
    await ctx().app.jobs.idle();
    const second = transport.sent.find((m) => m.to === (quiet.data as { customer: { email: string } }).customer.email)!;
    expect(second.text).not.toContain('/portal/');
    expect(second.html).not.toContain('/portal/');
  });

  it('escapes what it writes into the HTML', async () => {
    const ws = await seedWorkspace(ctx());
    await ctx().app.inject({ method: 'PATCH', url: `/api/developer/products/${ws.ids.products.p1}`, headers: bearer(ws.owner), payload: { name: 'Fuzz <b>&</b>' } });
    const email = `esc-${ws.suffix}@cust.test`;
    await grant(ctx(), ws.owner, { productId: ws.ids.products.p1, email, reason: 'x', sendProductPurchaseEmails: true });
    await ctx().app.jobs.idle();
    const mail = transport.sent.find((m) => m.to === email)!;
    expect(mail.html).toContain('Fuzz &lt;b&gt;&amp;&lt;/b&gt;');
    expect(mail.html).not.toContain('<b>&</b>');
  });
});

describe('the file transport', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'patchbay-mail-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes each e-mail as one JSON line with its text and its HTML', async () => {
    const file = new FileTransport(dir);
    await file.send({ id: 1, from: 'Patchbay <no-reply@patchbay.invalid>', to: 'a@b.test', subject: 'S', text: 'plain', html: '<p>rich</p>' });
    const [line] = readFileSync(path.join(dir, 'outbox.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(line!)).toMatchObject({ to: 'a@b.test', text: 'plain', html: '<p>rich</p>' });
  });
});
