import { Button, Menu, Text } from '@mantine/core';
import { IconBuildingSkyscraper, IconChevronDown, IconLogout, IconMail } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, Navigate, Outlet, useLocation, useNavigate } from 'react-router';
import { api, isProblem, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { notify } from '../../kit/notify';
import { PageLoader } from '../../kit/PageLoader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { Shell } from '../../kit/Shell';
import { memberSessionQuery, type Permission, useMemberAccess } from '../member-access';
import type { ConsoleNavItem } from '../nav';
import { outboxQuery } from './queries';
import { selectedWorkspace } from './workspace';

export const APP_NAME = 'Patchbay console';

function AccountMenu() {
  const session = useQuery(memberSessionQuery);
  const client = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/developer/session')),
    meta: { anonymous: true },
    onSettled: async () => {
      // Leave the page first, so nothing on it asks again; then forget this account's data (reset
      // rather than clear: the frame keeps observing its queries).
      await navigate('/sign-in', { replace: true });
      await client.resetQueries();
      notify('You are signed out.');
    },
  });
  if (!session.data) return null;
  const { account, workspace, workspaces } = session.data;
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <Button variant="subtle" rightSection={<IconChevronDown size={14} aria-hidden />} aria-label={`Account menu of ${account.email}`}>
          <Text span size="sm" truncate maw={220}>
            {workspace ? workspace.name : account.email}
          </Text>
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{account.email}</Menu.Label>
        {workspaces.length > 1 && (
          <Menu.Item component={Link} to="/workspaces" leftSection={<IconBuildingSkyscraper size={16} aria-hidden />}>
            Switch workspace
          </Menu.Item>
        )}
        <Menu.Item leftSection={<IconLogout size={16} aria-hidden />} onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

/**
 * The outbox exists outside production only, and only owners may read it: the entry appears for an
 * owner once the route answered, so a production console never shows it.
 */
function useOutboxAvailable(owner: boolean): boolean {
  const outbox = useQuery({ ...outboxQuery, enabled: owner });
  return owner && outbox.isSuccess;
}

/** The shell with the navigation entries the signed-in member may open, and their account menu. */
export function ConsoleFrame({ nav }: { nav: ConsoleNavItem[] }) {
  const access = useMemberAccess();
  const outbox = useOutboxAvailable(access.owner);
  const items = access.loaded ? nav.filter((item) => access.can(item.permission) && (!item.allProducts || access.allProducts)) : [];
  if (outbox) items.push({ to: '/outbox', label: 'Outbox', icon: <IconMail size={18} aria-hidden />, permission: null });
  return (
    <Shell appName={APP_NAME} nav={items} actions={access.loaded ? <AccountMenu /> : undefined}>
      <Outlet />
    </Shell>
  );
}

/**
 * The console's pages behind sign-in: without a session, the sign-in page (which comes back here);
 * with `workspace`, a member of several workspaces who has not picked one goes to the picker first.
 */
export function RequireMember({ workspace }: { workspace: boolean }) {
  const session = useQuery(memberSessionQuery);
  const client = useQueryClient();
  const location = useLocation();
  const here = location.pathname + location.search;
  // A remembered workspace the member no longer belongs to: forget it and ask again.
  const staleChoice = isProblem(session.error, 403) && selectedWorkspace.get() !== null;
  useEffect(() => {
    if (!staleChoice) return;
    selectedWorkspace.clear();
    void client.resetQueries();
  }, [staleChoice, client]);

  if (isProblem(session.error, 401)) return <Navigate to="/sign-in" replace state={{ from: here }} />;
  if (session.isError && !staleChoice) return <ProblemAlert error={session.error} onRetry={() => void session.refetch()} />;
  if (!session.data) return <PageLoader label="Loading your workspace" />;
  if (workspace && session.data.workspace === null) return <Navigate to="/workspaces" replace state={{ from: here }} />;
  return <Outlet />;
}

/** A page the member's permission allows; without it the page says so and asks the API nothing. */
export function Allowed({ permission, owner = false, allProducts = false }: { permission: Permission | null; owner?: boolean; allProducts?: boolean }) {
  const access = useMemberAccess();
  if (!access.loaded) return <PageLoader />;
  if (access.can(permission) && (!owner || access.owner) && (!allProducts || access.allProducts)) return <Outlet />;
  if (access.can(permission) && allProducts && !access.allProducts) {
    return (
      <EmptyState title="This page needs access to every product">
        It covers the whole workspace, and your role is limited to some products. Ask the workspace owner for access to all products.
      </EmptyState>
    );
  }
  return (
    <EmptyState title="This page is not part of your access">
      Your role in this workspace does not include it. Ask the workspace owner or a teammate who manages members to grant
      {permission ? ` “${permission}”` : ' it'}.
    </EmptyState>
  );
}
