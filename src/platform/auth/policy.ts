import type {} from '@fastify/cookie';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { AppError, CommonErrors, defineErrors, forbidden, type CodesOf, type ErrorSpec } from '../http/errors.js';
import { type TokenClaims, InvalidTokenError } from './jwt.js';
import type { Permission } from './permissions.js';
import { createScope, type CustomerScope, type DeveloperScope, hasPermission, type RecipientScope, type Scope } from './scope.js';

const authErrorsSpecs = {
  WORKSPACE_REQUIRED: { status: 400, title: 'No workspace selected', description: 'the token has no `wid` and no `X-Workspace-Id` was sent' },
  WORKSPACE_ACCESS_DENIED: { status: 403, title: 'Not a member of this workspace', description: 'the account is not a member of the selected workspace' },
  ALL_PRODUCTS_SCOPE_REQUIRED: { status: 403, title: 'This action needs all-products workspace access', description: 'the route needs all-products workspace access' },
  OWNER_REQUIRED: { status: 403, title: 'Only the workspace owner may do this', description: 'the action is the workspace owner\'s alone (a live payout run, reading the development outbox): a teammate\'s permissions do not carry it' },
  API_TOKEN_NOT_ALLOWED: {
    status: 403,
    title: 'API tokens cannot use this route',
    description: 'the team routes (members, API tokens) need a signed-in member (a console session or a JWT); an API token cannot mint tokens or change the team',
  },
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
  /** A console session (cookie or `Authorization: Bearer pds_…`) before a workspace is chosen; JWTs and API tokens are refused. */
  | { auth: 'developer' }
  /** A buyers' portal route: a customer portal session (cookie or `Authorization: Bearer pcs_…`) of one workspace; nothing else. */
  | { auth: 'customer' }
  | {
      auth: 'account';
      permission: Permission | null;
      recordPermission?: Permission;
      allProducts?: boolean;
      /** The path parameter naming a product: a product outside the caller's assignment answers 404 here. */
      product?: string;
      /** False: API tokens are refused with 403 (routes that manage the team and its credentials). Default true. */
      apiTokens?: boolean;
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    policy?: RoutePolicy;
  }
  interface FastifyRequest {
    scope: Scope | null;
    recipient: RecipientScope | null;
    developer: DeveloperScope | null;
    customer: CustomerScope | null;
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
  /** Left out of the API document on purpose (`schema.hide`): the web front end's pages and assets. */
  hidden?: true;
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

/** The cookie that carries a browser's console session. */
export const DEVELOPER_SESSION_COOKIE = 'patchbay_developer_session';
export const DEVELOPER_SESSION_TOKEN = /^pds_[A-Za-z0-9_-]{43}$/;
export const API_TOKEN = /^pat_[A-Za-z0-9_-]{43}$/;

/** Resolves the developer side's opaque credentials (null: unknown, ended, revoked or expired). */
export interface DeveloperCredentials {
  session(token: string): Promise<DeveloperScope | null>;
  apiToken(token: string): Promise<{ accountId: number; workspaceId: number } | null>;
}
const NO_DEVELOPER_CREDENTIALS: DeveloperCredentials = { session: async () => null, apiToken: async () => null };

/** The cookie that carries a browser's customer portal session. */
export const CUSTOMER_SESSION_COOKIE = 'patchbay_customer_session';
export const CUSTOMER_SESSION_TOKEN = /^pcs_[A-Za-z0-9_-]{43}$/;

/**
 * Resolves a customer portal session token: the buyer's scope, `portal-off` when the session is
 * live but its workspace turned the portal off (every portal route answers 404 then), or null.
 */
export type CustomerSessionVerifier = (token: string) => Promise<CustomerScope | 'portal-off' | null>;

export function requireCustomer(request: FastifyRequest): CustomerScope {
  if (!request.customer) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A customer portal session is required');
  return request.customer;
}

export function requireDeveloper(request: FastifyRequest): DeveloperScope {
  if (!request.developer) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A console session is required');
  return request.developer;
}

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
const JWT_BEARER = /^Bearer ([A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*)$/;

/** Who an account route's request comes from, before a workspace is chosen. */
type AccountCredential =
  | { kind: 'jwt'; accountId: number; workspaceId: number | null }
  | { kind: 'session'; accountId: number }
  | { kind: 'apiToken'; accountId: number; workspaceId: number };

const cookieOf = (request: FastifyRequest, name: string) => (request.cookies as Record<string, string | undefined> | undefined)?.[name];

/** A console session from `Authorization: Bearer pds_…` or, without an Authorization header, the cookie. */
async function sessionOf(request: FastifyRequest, developer: DeveloperCredentials): Promise<DeveloperScope | null> {
  const header = request.headers.authorization;
  const token = header !== undefined ? /^Bearer (\S+)$/.exec(header)?.[1] : cookieOf(request, DEVELOPER_SESSION_COOKIE);
  return token && DEVELOPER_SESSION_TOKEN.test(token) ? developer.session(token) : null;
}

/**
 * The Authorization header decides when there is one (a JWT exactly as before, a `pds_` session
 * or a `pat_` API token); without it, the console's session cookie.
 */
async function accountCredential(
  request: FastifyRequest,
  verify: (token: string) => Promise<TokenClaims>,
  developer: DeveloperCredentials,
): Promise<AccountCredential> {
  const header = request.headers.authorization;
  const opaque = header ? /^Bearer ((?:pds|pat)_\S*)$/.exec(header)?.[1] : undefined;
  if (opaque?.startsWith('pat_')) {
    const token = API_TOKEN.test(opaque) ? await developer.apiToken(opaque) : null;
    if (!token) throw unauthenticated('Invalid, revoked or expired API token');
    return { kind: 'apiToken', ...token };
  }
  if (opaque !== undefined || (!header && cookieOf(request, DEVELOPER_SESSION_COOKIE) !== undefined)) {
    const session = await sessionOf(request, developer);
    if (!session) throw unauthenticated('Invalid, ended or expired console session; sign in again');
    return { kind: 'session', accountId: session.accountId };
  }
  const match = header ? JWT_BEARER.exec(header) : null;
  if (!match?.[1]) throw unauthenticated(header ? 'Malformed Authorization header' : 'Missing bearer token');
  try {
    return { kind: 'jwt', ...(await verify(match[1])) };
  } catch (error) {
    if (error instanceof InvalidTokenError) throw unauthenticated('Invalid or expired token');
    throw error;
  }
}

function pickedWorkspace(request: FastifyRequest): number | undefined {
  const picked = request.headers['x-workspace-id'];
  if (picked === undefined) return undefined;
  if (typeof picked !== 'string' || !/^[1-9]\d{0,9}$/.test(picked) || Number(picked) > 2147483647) {
    throw new AppError(CommonErrors.VALIDATION_FAILED, 'X-Workspace-Id must be a workspace id');
  }
  return Number(picked);
}

/** A session's workspace when none is picked: the account's only one. */
async function soleWorkspace(db: Db, accountId: number): Promise<number> {
  const rows = await db.selectFrom('memberships').where('account_id', '=', accountId).select('workspace_id').limit(2).execute();
  if (rows.length === 0) throw new AppError(AuthErrors.WORKSPACE_ACCESS_DENIED, 'The account is not a member of any workspace');
  if (rows.length > 1) throw new AppError(AuthErrors.WORKSPACE_REQUIRED, 'The account is a member of several workspaces: send X-Workspace-Id');
  return rows[0]!.workspace_id;
}

async function workspaceOf(db: Db, credential: AccountCredential, picked: number | undefined): Promise<number> {
  switch (credential.kind) {
    case 'jwt': {
      const workspaceId = picked ?? credential.workspaceId;
      if (workspaceId === null) throw new AppError(AuthErrors.WORKSPACE_REQUIRED, 'Send X-Workspace-Id or use a token with a workspace');
      return workspaceId;
    }
    case 'apiToken':
      // A token belongs to one workspace; it never reaches another one of its member.
      if (picked !== undefined && picked !== credential.workspaceId) {
        throw new AppError(AuthErrors.WORKSPACE_ACCESS_DENIED, 'An API token works only in the workspace it was made in');
      }
      return credential.workspaceId;
    case 'session':
      return picked ?? (await soleWorkspace(db, credential.accountId));
  }
}

export function registerPolicy(
  app: FastifyInstance,
  db: Db,
  verify: (token: string) => Promise<TokenClaims>,
  verifyRecipient: RecipientSessionVerifier = async () => null,
  developer: DeveloperCredentials = NO_DEVELOPER_CREDENTIALS,
  verifyCustomer: CustomerSessionVerifier = async () => null,
): void {
  app.decorateRequest('scope', null);
  app.decorateRequest('recipient', null);
  app.decorateRequest('developer', null);
  app.decorateRequest('customer', null);
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
      if (method !== 'HEAD') catalog.push({ method, url: route.url, policy, ...(route.schema?.hide ? { hidden: true as const } : {}) });
    }
  });

  app.addHook('onRequest', async (request: FastifyRequest, _reply: FastifyReply) => {
    const policy = request.routeOptions.config?.policy;
    if (!policy || policy.auth === 'public') return;
    if (policy.auth === 'recipient') {
      // Bearer for non-browser clients, else the HttpOnly cookie; a developer JWT is not a session.
      const header = request.headers.authorization;
      const bearer = header ? /^Bearer (\S+)$/.exec(header)?.[1] : undefined;
      const token = bearer ?? cookieOf(request, RECIPIENT_SESSION_COOKIE);
      const recipient = token && RECIPIENT_TOKEN.test(token) ? await verifyRecipient(token) : null;
      if (!recipient) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A partner portal session is required', { headers: { 'www-authenticate': 'Bearer realm="partner-portal"' } });
      request.recipient = recipient;
      return;
    }
    if (policy.auth === 'customer') {
      // Bearer for non-browser clients, else the HttpOnly cookie; no other credential is a buyer's session.
      const header = request.headers.authorization;
      const token = header !== undefined ? /^Bearer (\S+)$/.exec(header)?.[1] : cookieOf(request, CUSTOMER_SESSION_COOKIE);
      const customer = token && CUSTOMER_SESSION_TOKEN.test(token) ? await verifyCustomer(token) : null;
      if (customer === 'portal-off') throw new AppError(CommonErrors.NOT_FOUND, 'This workspace has no customer portal');
      if (!customer) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A customer portal session is required (sign in with an e-mailed link)', { headers: { 'www-authenticate': 'Bearer realm="customer-portal"' } });
      request.customer = customer;
      return;
    }
    if (policy.auth === 'developer') {
      const session = await sessionOf(request, developer);
      if (!session) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A console session is required (sign in with an e-mailed link)', { headers: { 'www-authenticate': 'Bearer realm="console"' } });
      request.developer = session;
      return;
    }

    const credential = await accountCredential(request, verify, developer);
    const picked = pickedWorkspace(request);
    if (credential.kind === 'apiToken' && policy.apiTokens === false) {
      throw new AppError(AuthErrors.API_TOKEN_NOT_ALLOWED, 'API tokens cannot manage the team or its credentials; sign in to the console or use a JWT');
    }
    const workspaceId = await workspaceOf(db, credential, picked);
    // Loaded per request whatever the credential: a removed member or a withdrawn permission stops working at once.
    const scope = await scopeOfMember(db, credential.accountId, workspaceId);
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
