import type {} from '@fastify/cookie';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { AppError, CommonErrors, defineErrors, forbidden, type CodesOf, type ErrorSpec } from '../http/errors.js';
import { type TokenClaims, InvalidTokenError } from './jwt.js';
import type { Permission } from './permissions.js';
import { createScope, hasPermission, type RecipientScope, type Scope } from './scope.js';

const authErrorsSpecs = {
  WORKSPACE_REQUIRED: { status: 400, title: 'No workspace selected' },
  WORKSPACE_ACCESS_DENIED: { status: 403, title: 'Not a member of this workspace' },
  ALL_PRODUCTS_SCOPE_REQUIRED: { status: 403, title: 'This action needs all-products workspace access' },
} as const satisfies Record<string, ErrorSpec>;
export const AuthErrors = defineErrors(authErrorsSpecs);

declare module '../http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof authErrorsSpecs> {}
}

/**
 * Every route declares one. `permission` is checked before the handler runs;
 * `recordPermission` is documentation for checks a service makes after it has
 * fetched a record with the scope (so a foreign record is a 404, not a 403).
 */
export type RoutePolicy =
  | { auth: 'public' }
  /** A partner portal route: a recipient session (cookie or `Authorization: Bearer pps_…`), never a developer JWT. */
  | { auth: 'recipient' }
  | {
      auth: 'account';
      permission: Permission | null;
      recordPermission?: Permission;
      allProducts?: boolean;
      /** The path parameter naming a product: a product outside the caller's assignment answers 404 here. */
      product?: string;
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    policy?: RoutePolicy;
  }
  interface FastifyRequest {
    scope: Scope | null;
    recipient: RecipientScope | null;
  }
  interface FastifyInstance {
    /** Every registered route with its policy: drives the security matrix test and the docs. */
    routeCatalog: RouteEntry[];
  }
}

export interface RouteEntry {
  method: string;
  url: string;
  policy: RoutePolicy;
}

/** Routes owned by documentation plugins, which cannot carry our route config. */
const DOC_ROUTE = /^\/docs(\/|$)/;
const NoQuery = Type.Object({}, { additionalProperties: false });

export function requireRecipient(request: FastifyRequest): RecipientScope {
  if (!request.recipient) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A partner portal session is required');
  return request.recipient;
}

/** The cookie that carries a browser's partner portal session. */
export const RECIPIENT_SESSION_COOKIE = 'patchbay_partner_session';
const RECIPIENT_TOKEN = /^pps_[A-Za-z0-9_-]{43}$/;

/** Resolves a recipient session token to its scope (null: unknown, ended or expired). */
export type RecipientSessionVerifier = (token: string) => Promise<RecipientScope | null>;

export function requireScope(request: FastifyRequest): Scope {
  if (!request.scope) throw new AppError(CommonErrors.UNAUTHENTICATED, 'Authentication required');
  return request.scope;
}

/**
 * The scope of a workspace member as it is now, or null for a non-member. Used per request by
 * the policy hook, and by jobs that act for a member later (an import queued by them): they
 * get the member's access at the time they run.
 */
export async function scopeOfMember(db: Db, accountId: number, workspaceId: number): Promise<Scope | null> {
  const row = await db
    .selectFrom('memberships as m')
    .where('m.workspace_id', '=', workspaceId)
    .where('m.account_id', '=', accountId)
    .select([
      'm.owner',
      'm.permissions',
      'm.all_products',
      sql<number[]>`array(select mp.product_id from membership_products mp where mp.workspace_id = m.workspace_id and mp.account_id = m.account_id)`.as(
        'product_ids',
      ),
    ])
    .executeTakeFirst();
  if (!row) return null;
  return createScope({
    accountId,
    workspaceId,
    owner: row.owner,
    permissions: row.permissions,
    allProducts: row.all_products,
    productIds: row.product_ids,
  });
}

const unauthenticated = (detail: string) => new AppError(CommonErrors.UNAUTHENTICATED, detail, { headers: { 'www-authenticate': 'Bearer' } });

export function registerPolicy(
  app: FastifyInstance,
  db: Db,
  verify: (token: string) => Promise<TokenClaims>,
  verifyRecipient: RecipientSessionVerifier = async () => null,
): void {
  app.decorateRequest('scope', null);
  app.decorateRequest('recipient', null);
  const catalog: RouteEntry[] = [];
  app.decorate('routeCatalog', catalog);

  app.addHook('onRoute', (route) => {
    // Documentation plugins' routes, and the CORS plugin's catch-all preflight route, carry no config of ours.
    if (DOC_ROUTE.test(route.url) || route.url === '/openapi.json' || (route.method === 'OPTIONS' && route.url === '*')) {
      route.config = { ...(route.config ?? {}), policy: { auth: 'public' } } as typeof route.config;
      return;
    }
    const policy = route.config?.policy;
    if (!policy) throw new Error(`Route ${route.method} ${route.url} declares no access policy`);
    // A route that documents no query parameters accepts none: an unknown parameter is a 400, as on the lists.
    if (!route.schema?.querystring) route.schema = { ...(route.schema ?? {}), querystring: NoQuery };
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') catalog.push({ method, url: route.url, policy });
    }
  });

  app.addHook('onRequest', async (request: FastifyRequest, _reply: FastifyReply) => {
    const policy = request.routeOptions.config?.policy;
    if (!policy || policy.auth === 'public') return;
    if (policy.auth === 'recipient') {
      // Bearer for non-browser clients, else the HttpOnly cookie; a developer JWT is not a session.
      const header = request.headers.authorization;
      const bearer = header ? /^Bearer (\S+)$/.exec(header)?.[1] : undefined;
      const token = bearer ?? (request.cookies as Record<string, string | undefined> | undefined)?.[RECIPIENT_SESSION_COOKIE];
      const recipient = token && RECIPIENT_TOKEN.test(token) ? await verifyRecipient(token) : null;
      if (!recipient) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A partner portal session is required', { headers: { 'www-authenticate': 'Bearer realm="partner-portal"' } });
      request.recipient = recipient;
      return;
    }

    const header = request.headers.authorization;
    const match = header ? /^Bearer ([A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*)$/.exec(header) : null;
    if (!match?.[1]) throw unauthenticated(header ? 'Malformed Authorization header' : 'Missing bearer token');
    let claims: TokenClaims;
    try {
      claims = await verify(match[1]);
    } catch (error) {
      if (error instanceof InvalidTokenError) throw unauthenticated('Invalid or expired token');
      throw error;
    }

    const picked = request.headers['x-workspace-id'];
    let workspaceId = claims.workspaceId;
    if (picked !== undefined) {
      if (typeof picked !== 'string' || !/^[1-9]\d{0,9}$/.test(picked) || Number(picked) > 2147483647) {
        throw new AppError(CommonErrors.VALIDATION_FAILED, 'X-Workspace-Id must be a workspace id');
      }
      workspaceId = Number(picked);
    }
    if (workspaceId === null) throw new AppError(AuthErrors.WORKSPACE_REQUIRED, 'Send X-Workspace-Id or use a token with a workspace');

    const scope = await scopeOfMember(db, claims.accountId, workspaceId);
    if (!scope) throw new AppError(AuthErrors.WORKSPACE_ACCESS_DENIED, 'The account is not a member of the selected workspace');
    request.scope = scope;

    if (policy.product && scope.products !== 'all') {
      const productId = Number((request.params as Record<string, unknown>)[policy.product]);
      // Unassigned products do not exist for this member: 404 before anything else is said.
      if (!scope.products.has(productId)) throw new AppError(CommonErrors.NOT_FOUND, 'Product not found');
    }
    if (policy.permission && !hasPermission(scope, policy.permission)) throw forbidden(policy.permission);
    if (policy.allProducts && scope.products !== 'all') {
      throw new AppError(AuthErrors.ALL_PRODUCTS_SCOPE_REQUIRED, 'This action needs access to all products of the workspace');
    }
  });
}
