import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PERMISSIONS } from '../auth/permissions.js';
import type { RoutePolicy } from '../auth/policy.js';
import { finishDocument, type OpenApiDocument } from './openapi-document.js';
import { isLimitHook } from './rate-limits.js';

export type { OpenApiDocument } from './openapi-document.js';

/** What the application tells the document about itself; the mechanics live here. */
export interface OpenApiOptions {
  /** The service's public URL: the document's `servers`. */
  publicBaseUrl: string;
  /** Component names for schemas that routes use inline (`CustomerRow`, …); each becomes `#/components/schemas/<name>`. */
  components?: Readonly<Record<string, TSchema>>;
  /** Pinned operation ids, keyed `METHOD /path/{param}`; other operations get a derived id. */
  operationIds?: Readonly<Record<string, string>>;
  /** Last touches for single operations that the general rules cannot know (content types, extra headers). */
  amend?: (document: OpenApiDocument) => void;
}

function describePolicy(policy: RoutePolicy | undefined): string {
  if (!policy || policy.auth === 'public') return 'Public: no credential required.';
  if (policy.auth === 'recipient') {
    return 'Partner portal: a recipient session (the `patchbay_partner_session` cookie, or `Authorization: Bearer pps_…`); a developer JWT is refused with 401.';
  }
  if (policy.auth === 'developer') {
    return 'Console session: the `patchbay_developer_session` cookie, or `Authorization: Bearer pds_…`; JWTs and API tokens are refused with 401.';
  }
  if (policy.auth === 'customer') {
    return "Customer portal: a buyer's session of one workspace (the `patchbay_customer_session` cookie, or `Authorization: Bearer pcs_…`); developer and partner credentials are refused with 401. A workspace whose portal is off answers 404.";
  }
  const parts = [
    policy.apiTokens === false
      ? 'Bearer JWT or a console session (API tokens are refused with 403 `API_TOKEN_NOT_ALLOWED`); workspace and product scope apply.'
      : 'Bearer JWT, a console session or an API token; workspace and product scope apply.',
  ];
  if (policy.permission) parts.push(`Requires \`${policy.permission}\`.`);
  if (policy.recordPermission) parts.push(`Requires \`${policy.recordPermission}\` on a record the caller can see (otherwise 404).`);
  if (policy.allProducts) parts.push('Requires all-products workspace access.');
  return parts.join(' ');
}

/** A JSON-only fingerprint of a schema (TypeBox's symbol keys and `$id` left out), for recognising copies. */
function fingerprint(schema: unknown): string {
  return JSON.stringify(schema, function (this: unknown, key, value: unknown) {
    if (key === '$id') return undefined;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(Object.keys(value).sort().map((k) => [k, (value as Record<string, unknown>)[k]]));
    }
    return value;
  });
}

/**
 * Replaces every use of a named schema inside a route schema with a reference to its component,
 * on copies: the route's own validation and serialisation keep the originals.
 */
function nameSchemas(node: unknown, names: Map<unknown, string>, prints: Map<string, string>, top = true): unknown {
  if (Array.isArray(node)) return node.map((item) => nameSchemas(item, names, prints, false));
  if (!node || typeof node !== 'object') return node;
  const record = node as Record<string, unknown>;
  if (!top && record.type === 'object') {
    const name = names.get(node) ?? prints.get(fingerprint(node));
    if (name) return { $ref: name };
  }
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) copy[key] = nameSchemas(value, names, prints, false);
  return copy;
}

/**
 * Response headers written as a JSON schema object (`{ type: 'object', properties }`) become the
 * name → schema map that @fastify/swagger turns into OpenAPI header objects.
 */
function headerMap(headers: unknown): unknown {
  const h = headers as { type?: unknown; properties?: Record<string, unknown> } | undefined;
  return h && h.type === 'object' && h.properties ? h.properties : headers;
}

export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  const names = new Map<unknown, string>();
  const prints = new Map<string, string>();
  for (const [name, schema] of Object.entries(options.components ?? {})) {
    names.set(schema, name);
    prints.set(fingerprint(schema), name);
    // Shared schemas become components under their `$id` (the refResolver below).
    if (schema.$id === undefined) app.addSchema({ ...schema, $id: name });
  }

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Patchbay Developer Commerce API',
        version: '0.1.0',
        description:
          'Customers, serials, licensing and commerce for audio software developers. Errors are application/problem+json with a stable `code`.\n\n' +
          'Request and response examples are generated from the schemas (deterministically): they show shapes, not real data.\n\n' +
          'Permission catalogue:\n' +
          Object.entries(PERMISSIONS)
            .map(([name, text]) => `- \`${name}\`: ${text}`)
            .join('\n'),
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Developer access token (workspace member)' },
          recipientSession: { type: 'apiKey', in: 'cookie', name: 'patchbay_partner_session', description: 'Partner portal session (browser)' },
          recipientBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'pps_ session token', description: 'Partner portal session (non-browser clients)' },
          developerSession: { type: 'apiKey', in: 'cookie', name: 'patchbay_developer_session', description: 'Console session (browser), opened with an e-mailed sign-in link' },
          developerSessionBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'pds_ session token', description: 'Console session (non-browser clients)' },
          apiToken: { type: 'http', scheme: 'bearer', bearerFormat: 'pat_ API token', description: 'API token of a workspace member, for scripts (acts as that member, in one workspace)' },
          customerSession: { type: 'apiKey', in: 'cookie', name: 'patchbay_customer_session', description: "Customer portal session (browser): a buyer of one workspace, opened with an e-mailed sign-in link" },
          customerBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'pcs_ session token', description: 'Customer portal session (non-browser clients)' },
        },
      },
    },
    // Components are named after the schema's `$id` (`Problem`, `CustomerRow`), not `def-0`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' && /^[A-Za-z][\w.-]*$/.test(json.$id) ? json.$id : `def-${i}`),
    },
    transform: ({ schema, url, route }) => {
      const policy = (route.config as { policy?: RoutePolicy } | undefined)?.policy;
      const transformed = nameSchemas(schema ?? {}, names, prints) as Record<string, unknown>;
      const base = typeof transformed.description === 'string' ? `${transformed.description}\n\n` : '';
      transformed.description = base + describePolicy(policy);
      if (policy?.auth === 'account') {
        transformed.security = [{ bearer: [] }, { developerSession: [] }, { developerSessionBearer: [] }, ...(policy.apiTokens === false ? [] : [{ apiToken: [] }])];
        if (policy.permission || policy.recordPermission) {
          transformed['x-permission'] = policy.permission ?? policy.recordPermission;
        }
      } else if (policy?.auth === 'recipient') {
        transformed.security = [{ recipientSession: [] }, { recipientBearer: [] }];
      } else if (policy?.auth === 'developer') {
        transformed.security = [{ developerSession: [] }, { developerSessionBearer: [] }];
      } else if (policy?.auth === 'customer') {
        transformed.security = [{ customerSession: [] }, { customerBearer: [] }];
      } else {
        transformed.security = [];
      }
      // A route behind a rate limit answers 429 RATE_LIMITED (with Retry-After), declared or not.
      if ([route.onRequest, route.preHandler].flat().some(isLimitHook)) {
        const declared = (transformed.response ?? {}) as Record<string, unknown>;
        transformed.response = { ...declared, 429: declared['429'] ?? { $ref: 'Problem' } };
      }
      const responses = transformed.response as Record<string, Record<string, unknown>> | undefined;
      for (const response of Object.values(responses ?? {})) {
        if (response && typeof response === 'object' && response.headers) response.headers = headerMap(response.headers);
      }
      return { schema: transformed as typeof schema, url };
    },
    transformObject: (input) => finishDocument((input as { openapiObject: unknown }).openapiObject as OpenApiDocument, options) as never,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The API's own policy forbids everything; the reference page needs its scripts and styles.
    staticCSP:
      "default-src 'self'; base-uri 'self'; font-src 'self' data:; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'",
  });
  app.get(
    '/openapi.json',
    { schema: { hide: true }, config: { policy: { auth: 'public' } } },
    async () => app.swagger(),
  );
}
