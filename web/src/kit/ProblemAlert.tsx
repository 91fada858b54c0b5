import { Alert, Button, Code, Group, List, Stack, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { ApiProblem } from '../api/problem';

/** What failed, in the API's own words: title and detail, the fields it named, the code and the request id for support. */
export function ProblemAlert({ error, title, onRetry }: { error: unknown; title?: string; onRetry?: () => void }) {
  const problem = error instanceof ApiProblem ? error : null;
  const heading = title ?? problem?.title ?? 'Something went wrong';
  const detail = problem ? problem.detail : error instanceof Error ? error.message : String(error);
  return (
    <Alert color="red" variant="light" icon={<IconAlertTriangle aria-hidden />} title={heading} role="alert">
      <Stack gap="xs">
        {detail && detail !== heading && <Text size="sm">{detail}</Text>}
        {problem && problem.errors.length > 0 && (
          <List size="sm" spacing={2}>
            {problem.errors.map((e) => (
              <List.Item key={`${e.path}:${e.message}`}>
                <Code>{e.path.replace(/^(body|querystring|params)\//, '')}</Code> {e.message}
              </List.Item>
            ))}
          </List>
        )}
        {problem && (
          <Text size="xs" c="dimmed">
            {problem.status > 0 && (
              <>
                Code <Code>{problem.code}</Code>
              </>
            )}
            {problem.requestId && (
              <>
                {' · '}Request id <Code>{problem.requestId}</Code>
              </>
            )}
          </Text>
        )}
        {onRetry && (
          <Group>
            <Button size="xs" variant="default" onClick={onRetry}>
              Try again
            </Button>
          </Group>
        )}
      </Stack>
    </Alert>
  );
}
