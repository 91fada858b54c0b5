import { Anchor, Card, Group, SimpleGrid, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { EmptyState } from '../kit/EmptyState';
import { PageHeader } from '../kit/PageHeader';
import { memberSessionQuery, useMemberAccess } from './member-access';
import { CONSOLE_NAV } from './sections';

/** Where the console starts: the workspace, and the sections the member may open. */
export default function HomePage() {
  const session = useQuery(memberSessionQuery);
  const access = useMemberAccess();
  const workspace = session.data?.workspace;
  const sections = CONSOLE_NAV.filter((item) => access.can(item.permission) && (!item.allProducts || access.allProducts));
  return (
    <>
      <PageHeader
        title={workspace?.name ?? 'Console'}
        description={`Signed in as ${access.email}${workspace?.owner ? ', the workspace owner' : ''}${workspace && workspace.products !== 'all' ? `, for ${workspace.products.length} assigned products` : ''}.`}
      />
      {sections.length === 0 ? (
        <EmptyState title="Nothing to open yet">Your role in this workspace grants no section of the console. Ask the workspace owner for the access you need.</EmptyState>
      ) : (
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} component="ul" p={0} style={{ listStyle: 'none' }}>
          {sections.map((item) => (
            <Card component="li" withBorder key={item.to}>
              <Group gap="xs">
                {item.icon}
                <Anchor component={Link} to={item.to} fw={500}>
                  {item.label}
                </Anchor>
              </Group>
            </Card>
          ))}
        </SimpleGrid>
      )}
      <Text size="sm" c="dimmed" mt="lg">
        Scripts use the same API with an API token; the{' '}
        <Anchor href="/docs" underline="always">
          API reference
        </Anchor>{' '}
        lists every operation.
      </Text>
    </>
  );
}
