import { Button, Text } from '@mantine/core';
import { IconDownload, IconKey, IconLogout, IconPlugConnectedX, IconReceipt } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import { Navigate, Outlet, useLocation, useNavigate } from 'react-router';
import { api, isProblem, unwrap } from '../api/client';
import { PageLoader } from '../kit/PageLoader';
import { type NavItem, Shell } from '../kit/Shell';
import { isSessionOf, portalPath, sessionQuery, useWorkspaceRef } from './session';

/** The header's name until the buyer has signed in and the store's own name is known. */
export const APP_NAME = 'Customer portal';

const SessionProblem = lazy(() => import('./SessionProblem'));

const nav = (ref: string): NavItem[] => [
  { to: portalPath(ref, 'licenses'), label: 'Licenses and devices', icon: <IconKey size={18} aria-hidden /> },
  { to: portalPath(ref, 'downloads'), label: 'Downloads', icon: <IconDownload size={18} aria-hidden /> },
  { to: portalPath(ref, 'orders'), label: 'Orders', icon: <IconReceipt size={18} aria-hidden /> },
  { to: portalPath(ref, 'offline-activation'), label: 'Offline activation', icon: <IconPlugConnectedX size={18} aria-hidden /> },
];

function SignOutButton({ workspace }: { workspace: string }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/customer-portal/session')),
    meta: { anonymous: true },
    onSettled: async () => {
      // Leave the page first, so nothing on it asks again (and meets a 401); then forget this buyer's data.
      await navigate(portalPath(workspace, 'sign-in'), { replace: true, state: { signedOut: true } });
      client.clear();
    },
  });
  return (
    <Button variant="subtle" leftSection={<IconLogout size={16} aria-hidden />} loading={signOut.isPending} onClick={() => signOut.mutate()}>
      Sign out
    </Button>
  );
}

/** The frame of a store's portal: its name once the buyer is signed in, the sections, and sign-out. */
export function PortalLayout() {
  const ref = useWorkspaceRef();
  const session = useQuery(sessionQuery);
  const mine = isSessionOf(session.data, ref) ? session.data : null;
  return (
    <Shell
      appName={mine?.workspace.name ?? APP_NAME}
      home={portalPath(ref)}
      nav={mine ? nav(ref) : []}
      actions={
        mine ? (
          <>
            <Text size="sm" c="dimmed" visibleFrom="sm">
              {mine.customer.email}
            </Text>
            <SignOutButton workspace={ref} />
          </>
        ) : undefined
      }
    >
      <Outlet />
    </Shell>
  );
}

/** Pages of a signed-in buyer of this store: otherwise the sign-in page, which comes back here after. */
export function RequireSession() {
  const ref = useWorkspaceRef();
  const session = useQuery(sessionQuery);
  const location = useLocation();
  if (isSessionOf(session.data, ref)) return <Outlet />;
  if (session.isSuccess || isProblem(session.error, 401)) {
    return <Navigate to={portalPath(ref, 'sign-in')} replace state={{ from: location.pathname + location.search }} />;
  }
  if (session.isError) {
    return (
      <Suspense fallback={<PageLoader />}>
        <SessionProblem error={session.error} onRetry={() => void session.refetch()} />
      </Suspense>
    );
  }
  return <PageLoader label="Opening your purchases" />;
}
