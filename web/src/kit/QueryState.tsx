import { Stack } from '@mantine/core';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { PageLoader } from './PageLoader';
import { ProblemAlert } from './ProblemAlert';

/** A query's three states in one place: a labelled spinner, the problem with a retry, or the data. */
export function QueryState<T>({ query, label, children }: { query: UseQueryResult<T>; label: string; children: (data: T) => ReactNode }) {
  if (query.isPending) {
    return <PageLoader label={label} />;
  }
  if (query.isError) {
    return (
      <Stack>
        <ProblemAlert error={query.error} onRetry={() => void query.refetch()} />
      </Stack>
    );
  }
  return <>{children(query.data)}</>;
}
