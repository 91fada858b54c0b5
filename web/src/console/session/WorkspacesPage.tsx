import { Badge, Button, Container, Group, Paper, Stack, Text } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useLocation, useNavigate } from 'react-router';
import { EmptyState } from '../../kit/EmptyState';
import { PageHeader } from '../../kit/PageHeader';
import { QueryState } from '../../kit/QueryState';
import { memberSessionQuery } from '../member-access';
import { selectedWorkspace } from './workspace';

/**
 * The workspaces of the signed-in account, to pick the one the console acts in. Switching forgets
 * everything loaded for the previous workspace, so no page shows one workspace's rows under another's name.
 */
export default function WorkspacesPage() {
  const session = useQuery(memberSessionQuery);
  const client = useQueryClient();
  const navigate = useNavigate();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from;
  const open = async (id: number) => {
    selectedWorkspace.set(id);
    await client.resetQueries();
    void navigate(from && from !== '/workspaces' ? from : '/', { replace: true });
  };
  return (
    <Container size="sm" px={0}>
      <PageHeader title="Choose a workspace" description="You are a member of several workspaces. The console shows one at a time; switch from the account menu." />
      <QueryState query={session} label="Loading your workspaces">
        {(data) =>
          data.workspaces.length === 0 ? (
            <EmptyState title="You are not a member of any workspace">Ask a workspace owner to invite this address, then sign in again.</EmptyState>
          ) : (
            <Stack component="ul" p={0} style={{ listStyle: 'none' }}>
              {data.workspaces.map((w) => (
                <Paper component="li" withBorder p="md" key={w.id}>
                  <Group justify="space-between">
                    <Group gap="xs">
                      <Text fw={500}>{w.name}</Text>
                      {w.owner && <Badge variant="light">Owner</Badge>}
                      {data.workspace?.id === w.id && <Badge variant="outline">Current</Badge>}
                    </Group>
                    <Button variant={data.workspace?.id === w.id ? 'default' : 'filled'} onClick={() => void open(w.id)} aria-label={`Open ${w.name}`}>
                      Open
                    </Button>
                  </Group>
                </Paper>
              ))}
            </Stack>
          )
        }
      </QueryState>
    </Container>
  );
}
