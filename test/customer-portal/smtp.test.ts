import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpTransport } from '../../src/platform/mail/transport.js';
import { bearer, buildTestApp, seedWorkspace, type TestContext } from '../helpers/app.js';
import { startSmtpServer } from '../helpers/smtp.js';

// The SMTP transport against a real SMTP server: a buyer's e-mail leaves as multipart/alternative.
// Its own file: the app here is the only one of this process, so its runner sends every e-mail.

let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let ctx: TestContext;

beforeAll(async () => {
  smtp = await startSmtpServer();
  ctx = await buildTestApp({ mail: { transport: new SmtpTransport(smtp.url) } });
});
afterAll(async () => {
  await ctx?.app.close();
  await ctx?.database.close();
  await smtp?.close();
});

describe('the SMTP transport', () => {
  it('delivers a grant e-mail to a real SMTP server as multipart/alternative, the text part first', async () => {
    const ws = await seedWorkspace(ctx);
    const email = `smtp-${ws.suffix}@cust.test`;
    const granted = await ctx.app.inject({
      method: 'POST',
      url: '/api/developer/purchases/manual-grant',
      headers: bearer(ws.owner),
      payload: { productId: ws.ids.products.p1, email, reason: 'x', sendProductPurchaseEmails: true },
    });
    expect(granted.statusCode, granted.body).toBe(201);
    await ctx.app.jobs.idle();
    const got = smtp.received.find((m) => JSON.stringify(m.parsed.to ?? '').includes(email));
    expect(got, 'the SMTP server received the e-mail').toBeDefined();
    expect(got!.raw).toMatch(/Content-Type: multipart\/alternative/i);
    expect(got!.raw.indexOf('Content-Type: text/plain')).toBeGreaterThan(0);
    expect(got!.raw.indexOf('Content-Type: text/plain')).toBeLessThan(got!.raw.indexOf('Content-Type: text/html'));
    expect(got!.parsed.subject).toBe(`Your access to Product p1 ${ws.suffix}`);
    expect(got!.parsed.text).toContain(`http://patchbay.test/portal/${ws.workspaceId}`);
    expect(got!.parsed.text).toContain(granted.json().serials[0].serial);
    expect(got!.parsed.html).toContain(`Workspace ${ws.suffix}`);
    expect(got!.parsed.html).toContain(`href="http://patchbay.test/portal/${ws.workspaceId}"`);
  });
});
