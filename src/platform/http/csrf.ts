import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, type CodesOf, defineErrors, type ErrorSpec } from './errors.js';

const csrfSpecs = {
  CROSS_SITE_REQUEST_REFUSED: {
    status: 403,
    title: 'Cross-site request refused',
    description:
      'a request that changes state and carries a cookie came from another site (or a page of another origin): a browser session is used only by this service\'s own pages; other clients authenticate with a bearer token',
  },
} as const satisfies Record<string, ErrorSpec>;
export const CsrfErrors = defineErrors(csrfSpecs);

declare module './errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof csrfSpecs> {}
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface RequestOrigin {
  /** The Sec-Fetch-Site header (every current browser sends it). */
  secFetchSite: string | undefined;
  /** The Origin header (`null` when a browser withholds the origin). */
  origin: string | undefined;
}

/**
 * Why a state-changing browser request must be refused, or null when it may proceed. The same
 * rule as Go's `http.CrossOriginProtection`: Sec-Fetch-Site says whether the page that sent it is
 * this origin; without it (older browsers) the Origin header must be a trusted origin; a request
 * with neither comes from no browser, so no site can have forged it.
 * Origin alone would not do: a page with `Referrer-Policy: no-referrer` (ours) sends `Origin: null`
 * on its own same-origin POSTs.
 */
export function crossSiteVerdict(request: RequestOrigin, isTrusted: (origin: string) => boolean): string | null {
  const site = request.secFetchSite?.toLowerCase();
  const trustedOrigin = request.origin !== undefined && request.origin !== 'null' && isTrusted(request.origin);
  if (site === 'same-origin' || site === 'none') return null;
  if (site !== undefined) {
    return trustedOrigin ? null : `A ${site} request cannot use this service's cookies; call the API from its own pages, or with a bearer token`;
  }
  if (request.origin === undefined) return null;
  return trustedOrigin ? null : `A request from ${request.origin === 'null' ? 'an opaque origin' : request.origin} cannot use this service's cookies`;
}

const originOf = (url: string) => new URL(url).origin;

/**
 * Cross-site request forgery protection for every cookie-authenticated request, in one place:
 * a request that may change state (not GET, HEAD or OPTIONS) and carries a cookie must come from
 * this service's own origin (PUBLIC_BASE_URL, or the origin the browser reached it at) or from an
 * allowlisted CORS origin. Session cookies are also SameSite=Lax, which stops other sites but not
 * other origins of the same site (a sibling subdomain, another port): this check stops those.
 * Requests without cookies (bearer tokens, webhooks, plugins) are not affected.
 */
export function registerCrossSiteProtection(app: FastifyInstance, options: { publicBaseUrl: string; corsOrigins: string[] }): void {
  const trusted = new Set([options.publicBaseUrl, ...options.corsOrigins].map(originOf));
  const ownOrigin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;
  app.addHook('onRequest', async (request) => {
    if (SAFE_METHODS.has(request.method) || !request.headers.cookie) return;
    const origin = request.headers.origin;
    const site = request.headers['sec-fetch-site'];
    const verdict = crossSiteVerdict(
      { secFetchSite: typeof site === 'string' ? site : undefined, origin: typeof origin === 'string' ? origin : undefined },
      (candidate) => trusted.has(candidate) || candidate === ownOrigin(request),
    );
    if (verdict) throw new AppError(CsrfErrors.CROSS_SITE_REQUEST_REFUSED, verdict);
  });
}
