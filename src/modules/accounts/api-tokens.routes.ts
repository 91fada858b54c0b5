import { defineRoute } from '../../platform/auth/define-route.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { ApiTokenList, ApiTokenRevoked, CreateApiTokenBody, CreatedApiToken, TokenIdParams } from './api-tokens.schemas.js';
import { API_TOKEN_LIMIT, type ApiTokens } from './api-tokens.service.js';

const tags = ['console: team'];
// Every member may hold tokens (never more than they hold themselves); a token may not mint or revoke tokens.
const policy = { auth: 'account', permission: null, apiTokens: false } as const;

export const apiTokenRoutes = ({ tokens }: { tokens: ApiTokens }) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/api-tokens',
    policy,
    schema: {
      tags,
      summary: 'API tokens',
      description: 'The caller’s unrevoked tokens, newest first; the workspace owner sees every member’s. The tokens themselves are never shown again.',
      response: { 200: ApiTokenList, ...errorResponses(401, 403) },
    },
    handler: ({ scope }) => tokens.list(scope),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/developer/api-tokens',
    policy,
    // A replayed answer would be the token again, kept for a day in the idempotency table: the key is not honoured here.
    onRequest: async (request) => {
      delete request.headers['idempotency-key'];
    },
    schema: {
      tags,
      summary: 'Create an API token for scripts',
      description:
        'Answers the token once (`pat_…`; only its hash is kept). It acts as the caller, in this workspace only, with what the caller holds at the time of each request (a later change to the caller’s access applies to it too); it works on every workspace route except the team routes (members, API tokens: 403 API_TOKEN_NOT_ALLOWED). ' +
        `At most ${API_TOKEN_LIMIT} unrevoked tokens per member (409 API_TOKEN_LIMIT_REACHED). \`Idempotency-Key\` is ignored: a replay would show the token twice. Audited.`,
      body: CreateApiTokenBody,
      response: { 201: CreatedApiToken, ...errorResponses(400, 401, 403, 409) },
    },
    handler: async ({ request, reply, scope }) => {
      reply.header('cache-control', 'no-store');
      return reply.code(201).send(await tokens.create(scope, request.body));
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/developer/api-tokens/:tokenId',
    policy,
    schema: {
      tags,
      summary: 'Revoke an API token',
      description: 'The token answers 401 from the next request on. A member revokes their own tokens, the owner anyone’s; another member’s token answers 404. Audited.',
      params: TokenIdParams,
      response: { 200: ApiTokenRevoked, ...errorResponses(400, 401, 403, 404) },
    },
    handler: ({ request, scope }) => tokens.revoke(scope, request.params.tokenId),
  }),
];
