import { queryOptions } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../../api/client';

export type OutboxMail = paths['/api/developer/outbox']['get']['responses'][200]['content']['application/json']['rows'][number];
export type OpenedSession = paths['/api/developer/session']['post']['responses'][201]['content']['application/json'];

/** The e-mails this instance sent (development only; owners only). Absent in production: a 404, which hides the page. */
export const outboxQuery = queryOptions({
  queryKey: ['console', 'outbox'],
  queryFn: async () => (await unwrap(api.GET('/api/developer/outbox'))).rows,
});
