import { QueryCache, QueryClient, MutationCache } from '@tanstack/react-query';
import { isProblem } from '../api/problem';

/**
 * Server state for one app. Answers the client must act on (4xx) are not retried; a lost
 * connection or a 5xx is retried once. `onUnauthenticated` runs when any request answers 401
 * (a session that ended or expired), unless the query says `meta: { anonymous: true }`.
 */
export function createQueryClient(onUnauthenticated?: () => void): QueryClient {
  const signedOut = (error: unknown, meta: Record<string, unknown> | undefined) => {
    if (isProblem(error, 401) && !meta?.anonymous) onUnauthenticated?.();
  };
  return new QueryClient({
    queryCache: new QueryCache({ onError: (error, query) => signedOut(error, query.meta) }),
    mutationCache: new MutationCache({ onError: (error, _v, _c, mutation) => signedOut(error, mutation.meta) }),
    defaultOptions: {
      queries: {
        staleTime: 15_000,
        retry: (count, error) => count < 1 && !(isProblem(error) && error.status >= 400 && error.status < 500),
      },
      mutations: { retry: false },
    },
  });
}
