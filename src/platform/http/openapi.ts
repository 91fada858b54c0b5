import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { PERMISSIONS } from '../auth/permissions.js';
import type { RoutePolicy } from '../auth/policy.js';

function describePolicy(policy: RoutePolicy | undefined): string {
  if (!policy || policy.auth === 'public') return 'Public: no credential required.';
  if (policy.auth === 'recipient') {
    return 'Partner portal: a recipient session (the `patchbay_partner_session` cookie, or `Authorization: Bearer pps_…`); a developer JWT is refused with 401.';
  }
  const parts = ['Bearer JWT; workspace and product scope apply.'];
  if (policy.permission) parts.push(`Requires \`${policy.permission}\`.`);
  if (policy.recordPermission) parts.push(`Requires \`${policy.recordPermission}\` on a record the caller can see (otherwise 404).`);
  if (policy.allProducts) parts.push('Requires all-products workspace access.');
  return parts.join(' ');
}

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Patchbay Developer Commerce API',
        version: '0.1.0',
        description:
          'Customers, serials, licensing and commerce for audio software developers. Errors are application/problem+json with a stable `code`.\n\n' +
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
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const policy = (route.config as { policy?: RoutePolicy } | undefined)?.policy;
      const transformed = { ...(schema as Record<string, unknown>) };
      const base = typeof transformed.description === 'string' ? `${transformed.description}\n\n` : '';
      transformed.description = base + describePolicy(policy);
      if (policy?.auth === 'account') {
        transformed.security = [{ bearer: [] }];
        if (policy.permission || policy.recordPermission) {
          transformed['x-permission'] = policy.permission ?? policy.recordPermission;
        }
      } else if (policy?.auth === 'recipient') {
        transformed.security = [{ recipientSession: [] }, { recipientBearer: [] }];
      }
      return { schema: transformed as typeof schema, url };
    },
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
