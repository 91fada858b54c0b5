import { ActionIcon, Alert, Anchor, Button, Checkbox, CopyButton, Group, Paper, Stack, Text, TextInput, Title, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { ConsentBadge } from '../ConsentState';
import type { ProgramView } from '../model';
import { programsQuery, type Visits, visitsQuery } from '../queries';
import { type Column, DataTable } from '../../kit/DataTable';
import { formatCount, formatDate, formatDateTime } from '../../kit/format';
import { TermsCard } from '../TermsCard';
import { notify } from '../../kit/notify';

function LiveConsent({ program }: { program: ProgramView }) {
  const [agreed, setAgreed] = useState(false);
  const client = useQueryClient();
  const consent = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/partner-portal/programs/{id}/live-consent', {
          params: { path: { id: program.id } },
          body: { accept: true, terms_version: program.termsVersion!, policy_version: program.policyVersion },
        }),
      ),
    onSuccess: async (answer) => {
      await client.invalidateQueries();
      notify(answer.live_terms_consented ? 'Both parties consented: the agreement pays out live.' : 'Your consent is recorded.', 'green');
    },
  });
  return (
    <Paper withBorder p="md">
      <Stack>
        <Group justify="space-between">
          <Title order={2} size="h4">
            Live consent
          </Title>
          <ConsentBadge program={program} />
        </Group>
        <Text size="sm">
          Money is allocated to you, and paid out, only once you and the developer have both consented to the accepted terms (version{' '}
          {program.termsVersion ?? '—'}) under the managed-live policy {program.policyVersion}. The developer has{' '}
          {program.consent.developer ? 'consented' : 'not consented yet'}.
        </Text>
        {program.termsVersion === null ? (
          <Text>Accept the invitation first.</Text>
        ) : program.consent.recipient ? (
          <Alert color="green">You consented to terms version {program.termsVersion}.</Alert>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              consent.mutate();
            }}
          >
            <Stack>
              <Checkbox
                checked={agreed}
                onChange={(e) => setAgreed(e.currentTarget.checked)}
                label={`I consent to be paid under terms version ${program.termsVersion} and policy ${program.policyVersion}`}
              />
              {consent.isError && <ProblemAlert error={consent.error} />}
              <Button type="submit" disabled={!agreed} loading={consent.isPending} w="fit-content">
                Give live consent
              </Button>
            </Stack>
          </form>
        )}
      </Stack>
    </Paper>
  );
}

type VisitDay = Visits['daily'][number];

const visitColumns: Column<VisitDay>[] = [
  { key: 'date', header: 'Day (UTC)', render: (d) => formatDate(`${d.date}T00:00:00Z`) },
  { key: 'visits', header: 'Visits', render: (d) => formatCount(d.visits), numeric: true },
  { key: 'bots', header: 'Of them by bots', render: (d) => formatCount(d.bot_visits), numeric: true },
];

/** How often the link was followed: counts only (who visited is kept for attribution, never shown). */
function ReferralVisits({ agreementId }: { agreementId: number }) {
  const query = useQuery(visitsQuery(agreementId));
  return (
    <section aria-labelledby="visits-heading">
      <Title order={3} size="h5" id="visits-heading" mb="xs">
        Visits
      </Title>
      <QueryState query={query} label="Loading the link’s visits">
        {(visits) =>
          visits.total_visits === 0 ? (
            <Text size="sm" c="dimmed">
              No visits yet. Each time someone follows your link it is counted here, within a second or so.
            </Text>
          ) : (
            <Stack gap="xs">
              <Text size="sm">
                {formatCount(visits.period_visits)} in the last {visits.days} days
                {visits.period_bot_visits > 0 ? ` (${formatCount(visits.period_bot_visits)} by bots or link previews)` : ''} ·{' '}
                {formatCount(visits.total_visits)} in total · last visit {formatDateTime(visits.last_visit_at)}
              </Text>
              {visits.period_visits > 0 && (
                <DataTable
                  caption={`Days with visits in the last ${visits.days} days, newest first`}
                  columns={visitColumns}
                  rows={visits.daily.filter((d) => d.visits > 0).reverse()}
                  rowKey={(d) => d.date}
                />
              )}
            </Stack>
          )
        }
      </QueryState>
    </section>
  );
}

function ReferralLink({ url, agreementId }: { url: string; agreementId: number }) {
  return (
    <Paper withBorder p="md">
      <Stack>
        <Title order={2} size="h4">
          Referral link
        </Title>
        <Text size="sm">Share this link. A sale within the attribution window after someone follows it counts as yours.</Text>
        <Group gap="xs" wrap="nowrap" align="flex-end">
          <TextInput label="Your referral link" value={url} readOnly style={{ flex: 1 }} onFocus={(e) => e.currentTarget.select()} />
          <CopyButton value={url}>
            {({ copied, copy }) => (
              <Tooltip label={copied ? 'Copied' : 'Copy the link'} withArrow>
                <ActionIcon
                  size="lg"
                  variant={copied ? 'filled' : 'default'}
                  color={copied ? 'green' : undefined}
                  onClick={() => {
                    copy();
                    notify('Referral link copied.');
                  }}
                  aria-label={copied ? 'Referral link copied' : 'Copy the referral link'}
                >
                  {copied ? <IconCheck size={18} aria-hidden /> : <IconCopy size={18} aria-hidden />}
                </ActionIcon>
              </Tooltip>
            )}
          </CopyButton>
        </Group>
        <ReferralVisits agreementId={agreementId} />
      </Stack>
    </Paper>
  );
}

function Program({ program }: { program: ProgramView }) {
  return (
    <Stack>
      <PageHeader
        title={program.name}
        description={`${program.workspaceName} · ${program.kind} program`}
        actions={
          <Button component={Link} to={`/accounting?agreement=${program.id}`} variant="default">
            Accounting
          </Button>
        }
      />
      <Group gap="xs">
        <Text c="dimmed">Status</Text>
        <StatusBadge status={program.status} />
      </Group>
      {program.revisionPending && (
        <Alert color="blue" title="New terms proposed">
          The developer proposed terms version {program.proposedTermsVersion}. The accepted terms stay in force until you accept the new invitation sent
          to your e-mail.
        </Alert>
      )}
      {program.acceptedTerms ? <TermsCard terms={program.acceptedTerms} title="Accepted terms" policyVersion={program.policyVersion} /> : null}
      <LiveConsent program={program} />
      {program.referralUrl && <ReferralLink url={program.referralUrl} agreementId={program.id} />}
    </Stack>
  );
}

export default function ProgramPage() {
  const { id } = useParams();
  const query = useQuery(programsQuery);
  return (
    <QueryState query={query} label="Loading the program">
      {(programs) => {
        const program = programs.find((p) => String(p.id) === id);
        if (!program) {
          return (
            <>
              <PageHeader title="Program not found" />
              <EmptyState title="No such program" action={<Anchor component={Link} to="/programs">See your programs</Anchor>}>
                This program does not exist or is not yours.
              </EmptyState>
            </>
          );
        }
        return <Program program={program} />;
      }}
    </QueryState>
  );
}
