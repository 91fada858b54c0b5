import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

/**
 * A typed client of the API, generated from the committed docs/openapi.json: paths, parameters,
 * bodies and answers are checked by the compiler. The same recipe works for any consumer:
 * `npx openapi-typescript docs/openapi.json -o schema.d.ts` and openapi-fetch.
 */
export function createApiClient(baseUrl: string, token?: string) {
  return createClient<paths>({ baseUrl, headers: token ? { authorization: `Bearer ${token}` } : {} });
}
