import { Alert, Button, Container, Paper, Stack, Text, TextInput } from '@mantine/core';
import { IconMailCheck } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { api, ApiProblem, isProblem, unwrap } from '../../api/client';
import { hasCaptured, useFragmentValue } from '../../kit/fragment';
import { PageHeader } from '../../kit/PageHeader';
import { PageLoader } from '../../kit/PageLoader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { afterSignIn, isSessionOf, ownRef, portalPath, sessionQuery, useWorkspaceRef } from '../session';

/** Asks for a sign-in link to this store's portal; the answer is the same whether or not the address bought here. */
function SignInLinkForm({ workspace }: { workspace: string }) {
  const [email, setEmail] = useState('');
  const send = useMutation({
    mutationFn: (address: string) => unwrap(api.POST('/api/customer-portal/session/link', { body: { workspace, email: address } })),
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
        <TextInput
          label="E-mail address"
          description="The address you used when you bought"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
          error={problem?.fieldError('email')}
        />
        {send.isError && !problem?.fieldError('email') && <ProblemAlert error={send.error} />}
        <Button type="submit" loading={send.isPending} w="fit-content">
          E-mail me a sign-in link
        </Button>
      </Stack>
    </form>
  );
}

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
          <SignInLinkForm workspace={ref} />
        </Stack>
      </Paper>
    </Container>
  );
}
