import { Alert, Button, Group, Paper, SimpleGrid, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { type Column, DataTable } from '../../kit/DataTable';
import { EmptyState } from '../../kit/EmptyState';
import { formatBps, formatDateTime } from '../../kit/format';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import { QueryState } from '../../kit/QueryState';
import { Section } from '../../kit/Section';
import { useMemberAccess } from '../member-access';
import { InvitationResult } from './InvitationLink';
import { InvitationControl, LiveConsentControl, StatusControl } from './ProgramActions';
import { ProgramForm } from './ProgramForm';
import { ReferralLinkCell } from './ReferralLink';
import { activeProductsQuery, partnerKeys, type Program, programsQuery, type ReviseBody, type Terms } from './queries';
import { TermsCard } from './terms';

function useProductNames() {
  const products = useQuery(activeProductsQuery);
  const names = new Map((products.data ?? []).map((p) => [p.id, p.name]));
  return (id: number) => names.get(id) ?? `Product ${id}`;
}

function TermsSection({ program, productName }: { program: Program; productName: (id: number) => string }) {
  const accepted = program.accepted_terms;
  const proposed = program.proposed_terms;
  const revision = program.revision_pending && proposed && accepted;
  return (
    <Section id="terms" title="Terms">
      {revision && (
        <Alert color="blue" variant="light" title={`Revision proposed: terms version ${proposed.terms_version}`}>
          The accepted terms (version {accepted.terms_version}) stay in force until the partner accepts the revision from their new invitation.
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, md: revision ? 2 : 1 }}>
        {accepted && <TermsCard title={`Accepted terms (version ${accepted.terms_version}, in force)`} terms={accepted} productName={productName} />}
        {revision && <TermsCard title={`Proposed revision (version ${proposed.terms_version})`} terms={proposed} against={accepted} productName={productName} />}
        {!accepted && proposed && <TermsCard title={`Proposed terms (version ${proposed.terms_version}, not accepted yet)`} terms={proposed} productName={productName} />}
      </SimpleGrid>
    </Section>
  );
}

function Revise({ program, onDone }: { program: Program; onDone: () => void }) {
  const client = useQueryClient();
  const revise = useMutation({
    mutationFn: (body: ReviseBody) => unwrap(api.PATCH('/api/developer/partners/programs/{id}', { params: { path: { id: program.id } }, body })),
    onSuccess: async (answer) => {
      await client.invalidateQueries({ queryKey: partnerKeys.all });
      notify(answer.invitation ? `Terms version ${answer.invitation.terms_version} is proposed.` : 'The program is saved.', 'green');
      if (!answer.invitation?.invitation_link) onDone();
    },
  });
  if (revise.data?.invitation?.invitation_link) {
    return (
      <Stack>
        <InvitationResult invitation={revise.data.invitation} />
        <Button variant="default" w="fit-content" onClick={onDone}>
          Done
        </Button>
      </Stack>
    );
  }
  return <ProgramForm program={program} pending={revise.isPending} error={revise.error} submitLabel="Propose the revision" onRevise={(body) => revise.mutate(body)} onCancel={onDone} />;
}

const historyColumns = (productName: (id: number) => string): Column<Terms>[] => [
  { key: 'version', header: 'Version', render: (t) => t.terms_version, numeric: true },
  { key: 'rate', header: 'Default rate', render: (t) => formatBps(t.rate_bps), numeric: true },
  { key: 'products', header: 'Per-product rates', render: (t) => t.product_rates.map((r) => `${productName(r.product_id)} ${formatBps(r.rate_bps)}`).join(', ') || '—' },
  { key: 'window', header: 'Window', render: (t) => `${t.attribution_window_days} days` },
  { key: 'resellers', header: 'Reseller sales', render: (t) => (t.include_reseller_sales ? 'Included' : 'No') },
  { key: 'from', header: 'Effective from', render: (t) => formatDateTime(t.effective_from) },
];

function ProgramView({ program }: { program: Program }) {
  const access = useMemberAccess();
  const productName = useProductNames();
  const [revising, setRevising] = useState(false);
  const mayManage = access.can('partners.manage');
  return (
    <>
      <PageHeader
        title={program.name}
        description={`${program.kind === 'affiliate' ? 'Affiliate' : 'Collaborator'} program with ${program.recipient_email}`}
        actions={
          <Button component={Link} to={`/money/accounting?agreement=${program.id}`} variant="default">
            Accounting
          </Button>
        }
      />
      <Stack gap="lg">
        <SimpleGrid cols={{ base: 1, md: 2 }}>
          <StatusControl program={program} mayManage={mayManage} />
          <InvitationControl program={program} mayManage={mayManage} />
        </SimpleGrid>
        <LiveConsentControl program={program} owner={access.owner} />
        {program.referral_url && (
          <Section id="referral" title="Referral link">
            <Text size="sm">The partner shares this link; a sale within {program.accepted_terms?.attribution_window_days ?? program.proposed_terms?.attribution_window_days} days of a visit counts as theirs while the program is active.</Text>
            <ReferralLinkCell url={program.referral_url} name={program.name} />
          </Section>
        )}
        <TermsSection program={program} productName={productName} />
        {mayManage && program.status !== 'ended' && (
          <Paper withBorder p="md">
            {revising ? (
              <Revise program={program} onDone={() => setRevising(false)} />
            ) : (
              <Group justify="space-between">
                <Text size="sm">Changing the rates, window, reseller sales or start date proposes a new terms version and invites the partner to it.</Text>
                <Button variant="default" onClick={() => setRevising(true)}>
                  Revise the terms
                </Button>
              </Group>
            )}
          </Paper>
        )}
        <Section id="history" title="Terms history">
          <DataTable caption="Every terms version, oldest first" columns={historyColumns(productName)} rows={program.terms_history} rowKey={(t) => t.terms_version} />
        </Section>
      </Stack>
    </>
  );
}

/** One agreement: status changes, invitation and resend, the owner's live consent, and accepted terms next to a proposed revision. */
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
              <EmptyState title="There is no such program" action={<Button component={Link} to="/partners/programs">Back to the programs</Button>}>
                It may belong to another workspace, or partner programs are off for this workspace.
              </EmptyState>
            </>
          );
        }
        return <ProgramView program={program} />;
      }}
    </QueryState>
  );
}
