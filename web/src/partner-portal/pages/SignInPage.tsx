import { Alert, Container, Paper, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api, ApiProblem, unwrap } from '../../api/client';
import { hasCaptured, useFragmentValue } from '../../kit/fragment';
import { PageHeader } from '../../kit/PageHeader';
import { PageLoader } from '../../kit/PageLoader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { SignInLinkForm } from '../../kit/SignInLinkForm';
import { useSignedIn } from '../PortalLayout';
import { afterSignIn, pendingInvitation } from '../session';

/** The partner portal's sign-in link form: the address the partner invitation was sent to. */
export function PartnerSignInLinkForm({ email, label }: { email?: string; label?: string }) {
  return (
    <SignInLinkForm
      send={(address) => unwrap(api.POST('/api/partner-portal/session/link', { body: { email: address } }))}
      description="The address your partner invitation was sent to"
      {...(email === undefined ? {} : { email })}
      {...(label === undefined ? {} : { label })}
    />
  );
}

/**
 * Sign-in by e-mail link: without a token, a form that sends one; with `#token=…` (the link from
 * the e-mail), the token is exchanged for a session cookie once and the partner goes on to where
 * they were headed: the invitation they opened in this tab, the page they asked for, or programs.
 */
export default function SignInPage() {
  const signedIn = useSignedIn();
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const [hadToken] = useState(() => hasCaptured('token'));
  const from = (location.state as { from?: string; expired?: boolean } | null) ?? {};
  const signIn = useMutation({
    mutationFn: (token: string) => unwrap(api.POST('/api/partner-portal/session', { body: { token } })),
    meta: { anonymous: true },
    onSuccess: async () => {
      await client.invalidateQueries();
      const next = afterSignIn.take();
      void navigate(pendingInvitation.get() ? '/invitations' : (from.from ?? next ?? '/programs'), { replace: true });
    },
  });
  useEffect(() => {
    if (from.from) afterSignIn.remember(from.from);
  }, [from.from]);
  useFragmentValue('token', (token) => signIn.mutate(token));

  if ((hadToken && signIn.isIdle) || signIn.isPending || signIn.isSuccess) {
    return <PageLoader label="Signing you in" />;
  }
  if (signedIn && signIn.isIdle) return <Navigate to={from.from ?? '/programs'} replace />;
  return (
    <Container size="xs" px={0}>
      <PageHeader title="Sign in" description="Partners sign in with a link sent by e-mail: no password to remember." />
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
          <PartnerSignInLinkForm />
        </Stack>
      </Paper>
    </Container>
  );
}
