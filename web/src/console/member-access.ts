import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../api/client';

type SessionState = paths['/api/developer/session']['get']['responses'][200]['content']['application/json'];
export type Permission = NonNullable<SessionState['workspace']>['permissions'][number];

/** Who is signed in and, in the selected workspace, every permission they hold and their product assignment. */
export const memberSessionQuery = queryOptions({
  queryKey: ['console', 'session'],
  queryFn: () => unwrap(api.GET('/api/developer/session')),
  staleTime: 60_000,
  // Signed out is an answer here, not an interruption: the console's frame leads to the sign-in page itself.
  meta: { anonymous: true },
  retry: false,
});

/**
 * What the signed-in member may use, as the API reports it (`GET /api/developer/session`): pages
 * hide actions the member cannot take instead of offering buttons that answer 403. While the
 * session is loading nothing is allowed, so nothing flashes in and out.
 */
export function useMemberAccess() {
  const session = useQuery(memberSessionQuery);
  const workspace = session.data?.workspace ?? null;
  const held = new Set<string>(workspace?.permissions ?? []);
  return {
    loaded: session.isSuccess,
    owner: workspace?.owner ?? false,
    email: session.data?.account.email ?? '',
    allProducts: workspace?.products === 'all',
    can: (permission: Permission | null) => permission === null || held.has(permission),
  };
}
export type MemberAccess = ReturnType<typeof useMemberAccess>;
