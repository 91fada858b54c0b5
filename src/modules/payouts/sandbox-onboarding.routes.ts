import type { FastifyReply, preHandlerAsyncHookHandler } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import type { PayoutDestinations } from './destinations.service.js';
import { Html, OnboardingParams } from './sandbox-onboarding.schemas.js';
import { SANDBOX_ONBOARDING_TTL_MINUTES } from './sandbox-provider.js';

const tags = ['payouts sandbox'];

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(reply: FastifyReply, title: string, body: string) {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    // The API's policy forbids everything; this page needs its inline style and its own form.
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}` +
        `button{font:inherit;padding:.5rem 1.25rem}.note{color:#666;font-size:.9rem}</style></head>` +
        `<body><h1>${escapeHtml(title)}</h1>${body}<p class="note">Sandbox provider of Patchbay: no real account is created and no money moves.</p></body></html>`,
    );
}

/**
 * The built-in sandbox card provider's hosted onboarding, served by this service so the whole
 * flow can be walked in a browser: the link from `…/payouts/card-provider` shows a page, and its
 * button completes onboarding. The token in the path is the credential (single use, an hour);
 * unknown, used and expired tokens answer the same 404. Registered in a scope of their own (see
 * index.ts): the page's form body parser applies to these routes only.
 */
export const sandboxOnboardingRoutes = ({ destinations, limit }: { destinations: PayoutDestinations; limit: preHandlerAsyncHookHandler }) => [
  defineRoute({
    method: 'GET',
    url: '/api/payouts/sandbox/onboarding/:token',
    policy: { auth: 'public' },
    preHandler: limit,
    schema: {
      tags,
      summary: 'Sandbox card onboarding page',
      description: `The page a sandbox onboarding \`url\` opens (single use, valid ${SANDBOX_ONBOARDING_TTL_MINUTES} minutes): a button that completes onboarding. Unknown, used or expired: 404.`,
      params: OnboardingParams,
      response: { 200: Html, ...errorResponses(400, 404, 429) },
    },
    handler: async ({ request, reply }) => {
      const { display } = await destinations.sandboxOnboarding(request.params.token);
      return page(
        reply,
        'Sandbox card onboarding',
        `<p>Set up <strong>${escapeHtml(display)}</strong> as your payout destination.</p>` +
          '<form method="post"><button type="submit">Complete onboarding</button></form>',
      );
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/payouts/sandbox/onboarding/:token',
    policy: { auth: 'public' },
    preHandler: limit,
    schema: {
      tags,
      summary: 'Complete sandbox card onboarding',
      description: 'What the page’s button sends (any body is ignored): onboards the sandbox account and makes its destination ready. The link works once; afterwards, and for unknown or expired tokens, 404.',
      params: OnboardingParams,
      response: { 200: Html, ...errorResponses(400, 404, 413, 415, 429) },
    },
    handler: async ({ request, reply }) => {
      const done = await destinations.completeSandboxOnboarding(request.params.token);
      return page(
        reply,
        'Onboarding complete',
        done.current
          ? `<p><strong>${escapeHtml(done.display)}</strong> is ready. Return to the partner portal; it shows the destination as ready.</p>`
          : '<p>The sandbox account is onboarded, but it is no longer your current payout destination.</p>',
      );
    },
  }),
];
