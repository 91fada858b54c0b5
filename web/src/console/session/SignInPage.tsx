import { Alert, Container, Paper, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api, ApiProblem, unwrap } from '../../api/client';
import { hasCaptured, useFragmentValue } from '../../kit/fragment';
import { PageHeader } from '../../kit/PageHeader';
import { PageLoader } from '../../kit/PageLoader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { SignInLinkForm } from '../../kit/SignInLinkForm';
import { memberSessionQuery } from '../member-access';
import type { OpenedSession } from './queries';
import { afterSignIn } from './return-path';
import { selectedWorkspace } from './workspace';

/** The workspace to act in after signing in: the remembered one if this account still has it, the only one, or a choice. */
function landing(session: OpenedSession, wanted: string | null): string {
  const ids = session.workspaces.map((w) => w.id);
  const remembered = selectedWorkspace.get();
  if (remembered !== null && !ids.includes(remembered)) selectedWorkspace.clear();
  if (ids.length === 1) selectedWorkspace.set(ids[0]!);
  if (ids.length > 1 && selectedWorkspace.get() === null) return '/workspaces';
  return wanted ?? '/';
}

/**
 * Sign-in by e-mail link. Without a token: a form that sends one. With `#token=…` (the link from the
 * e-mail, taken out of the address bar when the app started): the token is exchanged once for the
 * session cookie, and the developer goes on to where they were headed, or picks a workspace first.
 */
export default function SignInPage() {
  const session = useQuery(memberSessionQuery);
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const [hadToken] = useState(() => hasCaptured('token'));
  const from = (location.state as { from?: string; expired?: boolean } | null) ?? {};
  const signIn = useMutation({
    mutationFn: (token: string) => unwrap(api.POST('/api/developer/session', { body: { token } })),
    meta: { anonymous: true },
    onSuccess: async (opened) => {
      const saved = afterSignIn.take();
      const wanted = from.from ?? saved;
      const next = landing(opened, wanted);
      // Whatever the previous account saw in this tab is not this one's. (Reset, not clear: mounted
      // components such as the frame keep observing the queries they have, which clear would orphan.)
      await client.resetQueries();
      void navigate(next, { replace: true, state: next === '/workspaces' && wanted ? { from: wanted } : undefined });
    },
  });
  useEffect(() => {
    afterSignIn.remember(from.from);
  }, [from.from]);
  useFragmentValue('token', (token) => signIn.mutate(token));

  if ((hadToken && signIn.isIdle) || signIn.isPending || signIn.isSuccess) return <PageLoader label="Signing you in" />;
  if (session.isSuccess && signIn.isIdle) return <Navigate to={from.from ?? '/'} replace />;
  return (
    <Container size="xs" px={0}>
      <PageHeader title="Sign in" description="Developers sign in with a link sent by e-mail: no password to remember." />
      <Paper withBorder p="lg">
        <Stack>
          {from.expired && <Alert color="yellow">Your session ended. Sign in again to continue.</Alert>}
          {signIn.isError && (
            <ProblemAlert
              error={signIn.error}
              title={signIn.error instanceof ApiProblem && signIn.error.status === 401 ? 'This sign-in link cannot be used' : undefined}
            />
          )}
          {signIn.isError && <Text size="sm">Ask for a new link below: each link works once, for 15 minutes.</Text>}
          <SignInLinkForm
            send={(email) => unwrap(api.POST('/api/developer/session/link', { body: { email } }))}
            description="The address you are a workspace member with"
          />
        </Stack>
      </Paper>
    </Container>
  );
}
