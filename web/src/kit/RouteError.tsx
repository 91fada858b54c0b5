import { Button, Container, Stack, Text, Title } from '@mantine/core';
import { isRouteErrorResponse, Link, useRouteError } from 'react-router';
import { ProblemAlert } from './ProblemAlert';

/** A URL no page answers (the app's own 404, with a way back). */
export function NotFoundPage({ home = '/' }: { home?: string }) {
  return (
    <Container size="sm" py="xl">
      <Stack>
        <Title order={1}>Page not found</Title>
        <Text>There is no page at this address. Check the link, or start again from the home page.</Text>
        <Button component={Link} to={home} w="fit-content">
          Go to the home page
        </Button>
      </Stack>
    </Container>
  );
}

/**
 * What the router shows when a page fails to load or render: most often a new release replaced
 * the page's code chunk while this tab was open, which a reload fixes.
 */
export function RouteError() {
  const error = useRouteError();
  if (isRouteErrorResponse(error) && error.status === 404) return <NotFoundPage />;
  return (
    <Container size="sm" py="xl">
      <Stack>
        <Title order={1}>This page could not be shown</Title>
        <ProblemAlert error={error instanceof Error ? error : new Error('Unknown error')} title="The page failed to load" />
        <Button onClick={() => window.location.reload()} w="fit-content">
          Reload the page
        </Button>
      </Stack>
    </Container>
  );
}
