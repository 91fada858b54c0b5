import { Alert, Button, Container, Paper, Stack, Text, TextInput } from '@mantine/core';
import { IconMailCheck } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api, ApiProblem, unwrap } from '../../api/client';
import { hasCaptured, useFragmentValue } from '../../kit/fragment';
import { PageHeader } from '../../kit/PageHeader';
import { PageLoader } from '../../kit/PageLoader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { useSignedIn } from '../PortalLayout';
import { afterSignIn, pendingInvitation } from '../session';

/** Sends a sign-in link to an address; the same answer whether or not it belongs to a partner. */
export function SignInLinkForm({ email: fixedEmail, label = 'E-mail me a sign-in link' }: { email?: string; label?: string }) {
  const [email, setEmail] = useState(fixedEmail ?? '');
  const send = useMutation({
    mutationFn: (address: string) => unwrap(api.POST('/api/partner-portal/session/link', { body: { email: address } })),
    meta: { anonymous: true },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate(email.trim());
  };
  if (send.isSuccess) {
    return (
      <Alert color="green" icon={<IconMailCheck aria-hidden />} title="Check your inbox" role="status">
        {send.data.message} The link works once, for 15 minutes; open it in this browser.
      </Alert>
    );
  }
  const problem = send.error instanceof ApiProblem ? send.error : null;
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        {fixedEmail === undefined && (
          <TextInput
            label="E-mail address"
            description="The address your partner invitation was sent to"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            error={problem?.fieldError('email')}
          />
        )}
        {send.isError && !problem?.fieldError('email') && <ProblemAlert error={send.error} />}
        <Button type="submit" loading={send.isPending} w="fit-content">
          {label}
        </Button>
      </Stack>
    </form>
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
          <SignInLinkForm />
        </Stack>
      </Paper>
    </Container>
  );
}
