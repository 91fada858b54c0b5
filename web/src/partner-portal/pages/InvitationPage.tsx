import { Alert, Button, Checkbox, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { PageLoader } from '../../kit/PageLoader';
import { Link, useNavigate } from 'react-router';
import { api, isProblem, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { hasCaptured, useFragmentValue } from '../../kit/fragment';
import { formatDateTime } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { type InvitationView, invitationView } from '../model';
import { useSignedIn } from '../PortalLayout';
import { pendingInvitation } from '../session';
import { TermsCard } from '../TermsCard';
import { PartnerSignInLinkForm } from './SignInPage';
import { notify } from '../../kit/notify';

function AcceptForm({ token, invitation }: { token: string; invitation: InvitationView }) {
  const [agreed, setAgreed] = useState(false);
  const client = useQueryClient();
  const navigate = useNavigate();
  const accept = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/partner-portal/programs/invitations/accept', {
          body: { token, accept_preview_terms: true, preview_terms_version: invitation.previewTermsVersion, payout_policy_version: invitation.payoutPolicyVersion },
        }),
      ),
    onSuccess: async (answer) => {
      pendingInvitation.clear();
      await client.invalidateQueries();
      notify(`You accepted ${invitation.agreementName}.`, 'green');
      void navigate(`/programs/${answer.agreement_id}`);
    },
  });
  return (
    <Paper withBorder p="md">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          accept.mutate();
        }}
      >
        <Stack>
          <Title order={2} size="h4">
            Accept the invitation
          </Title>
          <Checkbox
            checked={agreed}
            onChange={(e) => setAgreed(e.currentTarget.checked)}
            label={`I accept terms version ${invitation.previewTermsVersion} as shown above and payout policy ${invitation.payoutPolicyVersion}`}
          />
          <Text size="sm" c="dimmed">
            Accepting is not yet consent to be paid: once the agreement is live, you and the developer each give live consent on the program’s page.
          </Text>
          {accept.isError && <ProblemAlert error={accept.error} title={isProblem(accept.error, 409) ? 'The terms changed' : undefined} />}
          <Group>
            <Button type="submit" disabled={!agreed} loading={accept.isPending}>
              Accept the invitation
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}

function Invitation({ token, invitation }: { token: string; invitation: InvitationView }) {
  const signedIn = useSignedIn();
  return (
    <Stack>
      <PageHeader
        title={`Invitation: ${invitation.agreementName}`}
        description={`${invitation.workspaceName} invites you to its ${invitation.kind || 'partner'} program.`}
      />
      <Paper withBorder p="md">
        <Group gap="lg" wrap="wrap">
          <Group gap="xs">
            <Text c="dimmed">Status</Text>
            <StatusBadge status={invitation.status} />
          </Group>
          <Text>
            <Text span c="dimmed">
              Invited address{' '}
            </Text>
            {invitation.email}
          </Text>
          {invitation.status === 'pending' && (
            <Text>
              <Text span c="dimmed">
                Expires{' '}
              </Text>
              {formatDateTime(invitation.expiresAt)}
            </Text>
          )}
        </Group>
      </Paper>
      <TermsCard terms={invitation.terms} title="Proposed terms" policyVersion={invitation.policyVersion} />
      {invitation.status === 'accepted' ? (
        <Alert color="green" title="Already accepted">
          This invitation was accepted.{' '}
          {invitation.agreementId !== null && signedIn && <Link to={`/programs/${invitation.agreementId}`}>Open the program</Link>}
        </Alert>
      ) : signedIn === false ? (
        <Paper withBorder p="md">
          <Stack>
            <Title order={2} size="h4">
              Sign in to accept
            </Title>
            <Text>Accepting needs a session of the invited address. We will e-mail a sign-in link to {invitation.email}; this invitation waits in this tab.</Text>
            <PartnerSignInLinkForm email={invitation.email} label={`E-mail a sign-in link to ${invitation.email}`} />
          </Stack>
        </Paper>
      ) : signedIn ? (
        <AcceptForm token={token} invitation={invitation} />
      ) : null}
    </Stack>
  );
}

/** `/partner-portal/invitations#token=…`: the agreement, its terms and versions, and acceptance. */
export default function InvitationPage() {
  // The link's token is kept for this tab (a reload, a sign-in on the way); undefined until the fragment is read.
  const [token, setToken] = useState<string | null | undefined>(() => (hasCaptured('token') ? undefined : pendingInvitation.get()));
  useFragmentValue('token', (value) => {
    pendingInvitation.set(value);
    setToken(value);
  });
  const query = useQuery({
    queryKey: ['invitation', token],
    queryFn: () => unwrap(api.GET('/api/partner-portal/programs/invitations/{token}', { params: { path: { token: token! } } })).then(invitationView),
    enabled: typeof token === 'string',
    meta: { anonymous: true },
    retry: false,
  });
  if (token === undefined) return <PageLoader label="Opening the invitation" />;
  if (token === null) {
    return (
      <>
        <PageHeader title="Invitation" />
        <EmptyState title="No invitation opened">Open the invitation link from your e-mail in this browser to see its terms and accept it.</EmptyState>
      </>
    );
  }
  if (isProblem(query.error, 404)) {
    return (
      <>
        <PageHeader title="Invitation" />
        <EmptyState title="This invitation cannot be opened">
          The link is unknown, was replaced by a newer invitation, or has expired. Ask the developer who invited you to send a new one.
        </EmptyState>
      </>
    );
  }
  return (
    <QueryState query={query} label="Loading the invitation">
      {(invitation) => <Invitation token={token} invitation={invitation} />}
    </QueryState>
  );
}
