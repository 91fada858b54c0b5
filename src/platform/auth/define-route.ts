import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  HTTPMethods,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteShorthandOptions,
} from 'fastify';
import type { ResolveFastifyReplyReturnType } from 'fastify/types/type-provider.js';
import { AppError, CommonErrors, forbidden } from '../http/errors.js';
import type { Permission } from './permissions.js';
import { requireCustomer, requireDeveloper, requireRecipient, requireScope, type RoutePolicy } from './policy.js';
import { type CustomerScope, type DeveloperScope, hasPermission, type RecipientScope, type Scope } from './scope.js';

// One way to declare a route: method, path, schemas, the policy, and a handler that receives the
// caller its policy admits (a workspace Scope, a partner's RecipientScope, a console session's DeveloperScope, a buyer's CustomerScope, or nobody), so no handler
// fetches and casts the caller itself. The record permission a route declares is enforced here too.

export type AccountPolicy = Extract<RoutePolicy, { auth: 'account' }>;

/**
 * The permission an account route declares for a record it can only judge after fetching it with
 * the scope (a foreign record is a 404 before anyone learns a permission is missing). The service
 * calls `require()` once it holds the record; a record route whose handler succeeds without asking
 * fails loudly, so the check cannot be forgotten.
 */
export interface RecordAccess {
  /** 403 unless the caller holds the route's record permission. */
  require(): void;
  /** Whether the caller holds it (for answers that differ instead of refusing). */
  readonly granted: boolean;
}

/** For callers outside HTTP (jobs, fixtures, the CLI) acting with full authority over a record. */
export const RECORD_ACCESS_GRANTED: RecordAccess = Object.freeze({ require() {}, granted: true });

type Request<S extends FastifySchema> = FastifyRequest<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, S, TypeBoxTypeProvider>;
type Reply<S extends FastifySchema> = FastifyReply<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
>;

/** What a handler receives besides the request and reply, by the policy's caller kind. */
export type CallerOf<P extends RoutePolicy> = P extends { auth: 'account' }
  ? { scope: Scope; record: RecordAccess }
  : P extends { auth: 'recipient' }
    ? { recipient: RecipientScope }
    : P extends { auth: 'developer' }
      ? { developer: DeveloperScope }
      : P extends { auth: 'customer' }
        ? { customer: CustomerScope }
        : Record<never, never>;

export type RouteContext<S extends FastifySchema, P extends RoutePolicy> = { request: Request<S>; reply: Reply<S> } & CallerOf<P>;

type SentReply = FastifyReply | Promise<FastifyReply>;

/** Route options other than the ones defineRoute owns (hooks, body limit, extra config such as `longBody` or `ownInflightBound`). */
type ExtraOptions = Omit<RouteShorthandOptions, 'schema' | 'config'> & { config?: { longBody?: boolean; ownInflightBound?: boolean } };

export interface RouteDefinition<S extends FastifySchema, P extends RoutePolicy> extends ExtraOptions {
  method: HTTPMethods;
  url: string;
  policy: P;
  schema: S;
  /** Answers the body, or sends through the reply itself (a CSV stream) and returns the reply, as Fastify expects. */
  handler: (context: RouteContext<S, P>) => ResolveFastifyReplyReturnType<TypeBoxTypeProvider, S, RouteGenericInterface> | SentReply;
}

// The registry needs to hold routes of every schema; each definition was checked where it was written.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDefinition<any, RoutePolicy>;

/** Declares a route; the types of its request, answer and caller follow from the schema and the policy. */
export function defineRoute<const P extends RoutePolicy, S extends FastifySchema>(definition: RouteDefinition<S, P>): RouteDefinition<S, P> {
  return definition;
}

function recordAccess(scope: Scope, permission: Permission | undefined, asked: { value: boolean }): RecordAccess {
  const granted = permission === undefined || hasPermission(scope, permission);
  return {
    granted,
    require() {
      asked.value = true;
      if (!granted) throw forbidden(permission!);
    },
  };
}

function contextOf(policy: RoutePolicy, request: FastifyRequest, asked: { value: boolean }): Record<string, unknown> {
  switch (policy.auth) {
    case 'account': {
      const scope = requireScope(request);
      return { scope, record: recordAccess(scope, policy.recordPermission, asked) };
    }
    case 'recipient':
      return { recipient: requireRecipient(request) };
    case 'developer':
      return { developer: requireDeveloper(request) };
    case 'customer':
      return { customer: requireCustomer(request) };
    default:
      return {};
  }
}

/** Registers routes declared with defineRoute on an app (or an encapsulated plugin instance). */
export function registerRoutes(app: FastifyInstance, routes: readonly AnyRoute[]): void {
  for (const route of routes) {
    const { method, url, policy, schema, handler, config, ...options } = route;
    app.route({
      ...options,
      method,
      url,
      schema,
      config: { ...config, policy },
      handler: async (request, reply) => {
        const asked = { value: false };
        const context = { request, reply, ...contextOf(policy, request, asked) };
        const result = await handler(context as never);
        if (policy.auth === 'account' && policy.recordPermission && !asked.value && reply.statusCode < 400) {
          // A programming error, not a caller's: the route promised a record check that never ran.
          throw new AppError(CommonErrors.INTERNAL, `${method} ${url} declares recordPermission but never checked it`);
        }
        return result;
      },
    });
  }
}
