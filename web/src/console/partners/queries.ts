import { queryOptions } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../../api/client';

export type Program = paths['/api/developer/partners/programs']['get']['responses'][200]['content']['application/json']['programs'][number];
export type Terms = NonNullable<Program['accepted_terms']>;
export type CreateBody = NonNullable<paths['/api/developer/partners/programs']['post']['requestBody']>['content']['application/json'];
export type ReviseBody = NonNullable<paths['/api/developer/partners/programs/{id}']['patch']['requestBody']>['content']['application/json'];
export type Invitation = paths['/api/developer/partners/programs/{id}/invite']['post']['responses'][200]['content']['application/json']['invitation'];

export const partnerKeys = { all: ['partners'] as const };

/** The workspace's agreements, newest first (the route answers them all: the list pages in the browser). */
export const programsQuery = queryOptions({
  queryKey: [...partnerKeys.all, 'programs'],
  queryFn: async () => (await unwrap(api.GET('/api/developer/partners/programs'))).programs,
});

/** Active products of the workspace, for per-product rates and the preview (a partner program needs an active product). */
export const activeProductsQuery = queryOptions({
  queryKey: ['products', 'list', 'active-for-partners'],
  queryFn: async () => (await unwrap(api.GET('/api/developer/products', { params: { query: { status: 'active', limit: 500 } } }))).rows,
});

/** The managed-live policy a live consent names (the contract prints it without the brand prefix). */
export const LIVE_POLICY_SUFFIX = 'managed-live-v1';
