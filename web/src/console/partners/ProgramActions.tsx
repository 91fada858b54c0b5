import { Alert, Button, Checkbox, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, isProblem, unwrap } from '../../api/client';
import { formatDateTime } from '../../kit/format';
import { notify } from '../../kit/notify';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { StatusBadge } from '../../kit/StatusBadge';
import { Section } from '../../kit/Section';
import { consentSummary } from './consent';
import { InvitationResult } from './InvitationLink';
import { partnerKeys, type Program } from './queries';

type Target = 'active' | 'paused' | 'ended';

/** The changes contract 3.3 allows from each status; an ended agreement offers none, "resume" least of all. */
function transitions(status: string): Array<{ to: Target; label: string }> {
  switch (status) {
    case 'accepted':
      return [
        { to: 'active', label: 'Activate' },
        { to: 'ended', label: 'End the agreement' },
      ];
    case 'active':
      return [
        { to: 'paused', label: 'Pause' },
        { to: 'ended', label: 'End the agreement' },
      ];
    case 'paused':
      return [
        { to: 'active', label: 'Resume' },
        { to: 'ended', label: 'End the agreement' },
      ];
    default:
      return [];
  }
}

function useInvalidatePartners() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: partnerKeys.all });
}

export function StatusControl({ program, mayManage }: { program: Program; mayManage: boolean }) {
  const invalidate = useInvalidatePartners();
  const [ending, setEnding] = useState(false);
  const change = useMutation({
    mutationFn: (status: Target) => unwrap(api.POST('/api/developer/partners/programs/{id}/status', { params: { path: { id: program.id } }, body: { status } })),
    onSuccess: async (saved) => {
      setEnding(false);
      notify(`${saved.name} is ${saved.status}.`, 'green');
      await invalidate();
    },
  });
  const options = transitions(program.status);
  return (
    <Section id="status" title="Status" actions={<StatusBadge status={program.status} />}>
      {program.status === 'pending' && <Text size="sm">Waiting for the partner to accept the invitation. The status can change once they have.</Text>}
      {program.status === 'ended' && <Text size="sm">This agreement has ended. An ended agreement cannot be resumed, revised or invited to; earnings it made are still paid out.</Text>}
      {program.status === 'paused' && <Text size="sm">Paused: referral links stop attributing sales and new shares wait as pending until you resume.</Text>}
      {mayManage && options.length > 0 && (
        <Group>
          {options.map((o) => (
            <Button
              key={o.to}
              variant={o.to === 'ended' ? 'outline' : 'default'}
              color={o.to === 'ended' ? 'red' : undefined}
              loading={change.isPending && change.variables === o.to}
              onClick={() => (o.to === 'ended' ? setEnding(true) : change.mutate(o.to))}
            >
              {o.label}
            </Button>
          ))}
        </Group>
      )}
      {change.isError && !ending && <ProblemAlert error={change.error} />}
      <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={ending} onClose={() => setEnding(false)} title={`End ${program.name}?`}>
        <Stack>
          <Text size="sm">Ending is final: the agreement cannot be resumed, revised or invited to again. Earnings already made are still paid out.</Text>
          {change.isError && <ProblemAlert error={change.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setEnding(false)}>
              Keep it
            </Button>
            <Button color="red" loading={change.isPending} onClick={() => change.mutate('ended')}>
              End the agreement
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Section>
  );
}

/** Counts down to zero from `seconds` set at `since`; null when there is nothing to wait for. */
function useCountdown(until: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until === null) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [until]);
  return until === null ? 0 : Math.max(0, Math.ceil((until - now) / 1000));
}

export function InvitationControl({ program, mayManage }: { program: Program; mayManage: boolean }) {
  const invalidate = useInvalidatePartners();
  const [sendEmail, setSendEmail] = useState(true);
  const [waitUntil, setWaitUntil] = useState<number | null>(null);
  const wait = useCountdown(waitUntil);
  const invite = useMutation({
    mutationFn: () => unwrap(api.POST('/api/developer/partners/programs/{id}/invite', { params: { path: { id: program.id } }, body: { send_email: sendEmail } })),
    onSuccess: async () => {
      notify('A new invitation is out; older links stopped working.', 'green');
      await invalidate();
    },
    onError: (error) => {
      if (isProblem(error, 429) && error.retryAfter !== undefined) setWaitUntil(Date.now() + error.retryAfter * 1000);
    },
  });
  const invitation = program.invitation;
  const canInvite = mayManage && program.status !== 'ended';
  const cooling = invite.isError && isProblem(invite.error, 429) && wait > 0;
  return (
    <Section id="invitation" title="Invitation" actions={invitation && <StatusBadge status={invitation.status} />}>
      {invitation ? (
        <Text size="sm">
          To terms version {invitation.terms_version}, {invitation.email_queued ? 'e-mailed' : 'not e-mailed'}; {invitation.status === 'pending' ? 'valid until' : 'was valid until'}{' '}
          {formatDateTime(invitation.expires_at)}.
        </Text>
      ) : (
        <Text size="sm">No invitation yet.</Text>
      )}
      {invite.data && <InvitationResult invitation={invite.data.invitation} />}
      {canInvite && (
        <Stack gap="xs">
          <Checkbox label="E-mail it to the partner (otherwise the link is shown once)" checked={sendEmail} onChange={(e) => setSendEmail(e.currentTarget.checked)} />
          <Group>
            <Button variant="default" loading={invite.isPending} disabled={cooling} onClick={() => invite.mutate()}>
              {invitation?.status === 'accepted' ? 'Send a new invitation' : 'Resend the invitation'}
            </Button>
            {cooling && (
              <Text size="sm" role="status">
                Wait {wait} s: an invitation for this program went out moments ago (the resend cooldown).
              </Text>
            )}
          </Group>
        </Stack>
      )}
      {invite.isError && !cooling && <ProblemAlert error={invite.error} />}
    </Section>
  );
}

export function LiveConsentControl({ program, owner }: { program: Program; owner: boolean }) {
  const invalidate = useInvalidatePartners();
  const [agreed, setAgreed] = useState(false);
  const accepted = program.accepted_terms_version;
  const consent = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/developer/partners/programs/{id}/live-consent', {
          params: { path: { id: program.id } },
          body: { accept: true, terms_version: accepted!, policy_version: program.policy_version },
        }),
      ),
    onSuccess: async (answer) => {
      notify(answer.live_terms_consented ? 'Both parties consented: the agreement pays out live.' : 'Your consent is recorded; the partner’s is still needed.', 'green');
      await invalidate();
    },
  });
  const developerConsented = accepted !== null && program.consent.developer?.terms_version === accepted;
  const recipientConsented = accepted !== null && program.consent.recipient?.terms_version === accepted;
  return (
    <Section id="consent" title="Live consent" actions={<Text size="sm">{consentSummary(program)}</Text>}>
      <Text size="sm">
        Shares are payable only once the workspace owner and the partner have both consented to the accepted terms under the managed-live policy{' '}
        {program.policy_version}. Until then they accrue as pending.
      </Text>
      <Text size="sm">
        Owner: {developerConsented ? `consented ${formatDateTime(program.consent.developer?.consented_at)}` : 'not yet'} · Partner:{' '}
        {recipientConsented ? `consented ${formatDateTime(program.consent.recipient?.consented_at)}` : 'not yet'}
      </Text>
      {accepted === null ? (
        <Text size="sm">Consent comes after the partner accepts the invitation.</Text>
      ) : developerConsented ? null : owner ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            consent.mutate();
          }}
        >
          <Stack gap="xs">
            <Checkbox
              checked={agreed}
              onChange={(e) => setAgreed(e.currentTarget.checked)}
              label={`As the workspace owner, I consent to paying out live under terms version ${accepted} and policy ${program.policy_version}`}
            />
            {consent.isError && <ProblemAlert error={consent.error} />}
            <Button type="submit" disabled={!agreed} loading={consent.isPending} w="fit-content">
              Give live consent
            </Button>
          </Stack>
        </form>
      ) : (
        <Alert color="gray" variant="light" title="Only the workspace owner can give this consent">
          Live payment consent is the owner’s own act: it cannot be delegated, so a teammate’s permissions do not carry it. Ask the workspace owner to open
          this program and consent.
        </Alert>
      )}
    </Section>
  );
}
