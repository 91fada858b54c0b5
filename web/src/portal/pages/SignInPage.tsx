import { Alert, Container, Paper, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api, isProblem, unwrap } from '../../api/client';
import { hasCaptured, useFragmentValue } from '../../kit/fragment';
import { PageHeader } from '../../kit/PageHeader';
import { PageLoader } from '../../kit/PageLoader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { SignInLinkForm } from '../../kit/SignInLinkForm';
import { afterSignIn, isSessionOf, ownRef, portalPath, sessionQuery, useWorkspaceRef } from '../session';

interface ArrivalState {
  from?: string;
  expired?: boolean;
  signedOut?: boolean;
}

/**
 * `/portal/<workspace>/sign-in`: without a token, a form that e-mails a link; with `#token=…` (the
 * link from the e-mail), the token is exchanged for a session cookie once and the buyer goes on to
 * the page they asked for, or their licenses.
 */
export default function SignInPage() {
  const ref = useWorkspaceRef();
  const session = useQuery(sessionQuery);
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const [hadToken] = useState(() => hasCaptured('token'));
  const arrival = (location.state as ArrivalState | null) ?? {};
  const signIn = useMutation({
    mutationFn: (token: string) => unwrap(api.POST('/api/customer-portal/session', { body: { token } })),
    meta: { anonymous: true },
    onSuccess: (answer) => {
      // Another buyer's or another store's data must not linger; the bearer token in the answer is for
      // other clients and is dropped here (the browser holds the HttpOnly cookie).
      client.clear();
      client.setQueryData(sessionQuery.queryKey, { expiresAt: answer.expiresAt, customer: answer.customer, workspace: answer.workspace });
      const own = ownRef(answer);
      const here = isSessionOf(answer, ref);
      const next = here ? (arrival.from ?? afterSignIn.take(ref)) : null;
      void navigate(next ?? portalPath(here ? ref : own, 'licenses'), { replace: true });
    },
  });
  useEffect(() => {
    if (arrival.from) afterSignIn.remember(ref, arrival.from);
  }, [arrival.from, ref]);
  useFragmentValue('token', (token) => signIn.mutate(token));

  if ((hadToken && signIn.isIdle) || signIn.isPending || signIn.isSuccess) return <PageLoader label="Signing you in" />;
  if (isSessionOf(session.data, ref) && signIn.isIdle) return <Navigate to={arrival.from ?? portalPath(ref, 'licenses')} replace />;
  return (
    <Container size="xs" px={0}>
      <PageHeader title="Sign in" description="See your orders, license keys, devices and downloads. We e-mail you a link: no password to remember." />
      <Paper withBorder p="lg">
        <Stack>
          {arrival.expired && <Alert color="yellow">Your session ended. Sign in again to continue.</Alert>}
          {arrival.signedOut && (
            <Alert color="blue" role="status">
              You are signed out.
            </Alert>
          )}
          {signIn.isError && (
            <ProblemAlert error={signIn.error} title={isProblem(signIn.error, 401) ? 'This sign-in link cannot be used' : undefined} />
          )}
          {signIn.isError && <Text size="sm">Ask for a new link below: each link works once, for 15 minutes.</Text>}
          <SignInLinkForm
            send={(email) => unwrap(api.POST('/api/customer-portal/session/link', { body: { workspace: ref, email } }))}
            description="The address you used when you bought"
          />
        </Stack>
      </Paper>
    </Container>
  );
}
