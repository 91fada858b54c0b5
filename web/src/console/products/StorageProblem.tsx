import { Alert, Code, Stack, Text } from '@mantine/core';
import { IconServerOff } from '@tabler/icons-react';
import { isProblem } from '../../api/client';
import { ProblemAlert } from '../../kit/ProblemAlert';

/**
 * A problem of a file or package route. 503 PRIVATE_PACKAGE_STORAGE_REQUIRED is not the person's
 * doing: the server has no private storage (or cannot reach it), which only its operator can fix,
 * so it reads as a configuration problem with what to tell them; anything else is the API's own words.
 */
export function StorageProblem({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (isProblem(error, 503) && error.code === 'PRIVATE_PACKAGE_STORAGE_REQUIRED') {
    return (
      <Alert color="orange" variant="light" icon={<IconServerOff aria-hidden />} title="Private storage is not configured on this server" role="alert">
        <Stack gap={4}>
          <Text size="sm">
            Files and packages are kept only in private storage, and this server has none it can reach right now, so nothing can be uploaded or
            downloaded. This is a configuration problem for whoever runs Patchbay, not something to fix here: they set{' '}
            <Code>STORAGE_DRIVER=local</Code> with <Code>STORAGE_DIR</Code> (one instance) or <Code>STORAGE_DRIVER=s3</Code> with{' '}
            <Code>STORAGE_S3_BUCKET</Code>, or make the bucket reachable again. Nothing is ever served from a public
            place instead.
          </Text>
          <Text size="xs" c="dimmed">
            Code <Code>{error.code}</Code>
            {error.requestId && (
              <>
                {' · '}Request id <Code>{error.requestId}</Code>
              </>
            )}
          </Text>
        </Stack>
      </Alert>
    );
  }
  return <ProblemAlert error={error} onRetry={onRetry} />;
}
