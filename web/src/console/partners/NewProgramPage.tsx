import { Button, Group, Paper, Stack } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { notify } from '../../kit/notify';
import { PageHeader } from '../../kit/PageHeader';
import { InvitationResult } from './InvitationLink';
import { ProgramForm } from './ProgramForm';
import { type CreateBody, partnerKeys } from './queries';

/** A new affiliate or collaborator agreement: its first terms and the partner's invitation. */
export default function NewProgramPage() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const create = useMutation({
    mutationFn: (body: CreateBody) => unwrap(api.POST('/api/developer/partners/programs', { body })),
    onSuccess: async (answer) => {
      await client.invalidateQueries({ queryKey: partnerKeys.all });
      if (!answer.invitation.invitation_link) {
        notify(`${answer.agreement.name} is created and the invitation e-mailed.`, 'green');
        void navigate(`/partners/programs/${answer.agreement.id}`);
      }
    },
  });
  const shownOnce = create.data?.invitation.invitation_link ? create.data : null;
  return (
    <>
      <PageHeader title="New partner program" description="The partner accepts these terms from the invitation; nothing is paid before both of you give live consent." />
      <Paper withBorder p="md" maw={860}>
        {shownOnce ? (
          <Stack>
            <InvitationResult invitation={shownOnce.invitation} />
            <Group>
              <Button component={Link} to={`/partners/programs/${shownOnce.agreement.id}`}>
                Open {shownOnce.agreement.name}
              </Button>
            </Group>
          </Stack>
        ) : (
          <ProgramForm pending={create.isPending} error={create.error} submitLabel="Create and invite" onCreate={(body) => create.mutate(body)} onCancel={() => void navigate('/partners/programs')} />
        )}
      </Paper>
    </>
  );
}
