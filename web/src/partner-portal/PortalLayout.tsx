import { Button } from '@mantine/core';
import { IconCash, IconListDetails, IconLogout, IconWallet } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Navigate, Outlet, useLocation, useNavigate } from 'react-router';
import { api, isProblem, unwrap } from '../api/client';
import { PageLoader } from '../kit/PageLoader';
import { ProblemAlert } from '../kit/ProblemAlert';
import { type NavItem, Shell } from '../kit/Shell';
import { programsQuery } from './queries';
import { notify } from '../kit/notify';

export const APP_NAME = 'Patchbay partner portal';

const NAV: NavItem[] = [
  { to: '/programs', label: 'Programs', icon: <IconListDetails size={18} aria-hidden /> },
  { to: '/accounting', label: 'Accounting', icon: <IconCash size={18} aria-hidden /> },
  { to: '/payouts', label: 'Payout destinations', icon: <IconWallet size={18} aria-hidden /> },
];

/** Whether this browser has a partner session: the programs list answers 200 with one, 401 without. */
export function useSignedIn(): boolean | undefined {
  const programs = useQuery(programsQuery);
  if (programs.isSuccess) return true;
  if (isProblem(programs.error, 401)) return false;
  return undefined;
}

function SignOutButton() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const signOut = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/partner-portal/session')),
    meta: { anonymous: true },
    onSettled: async () => {
      // Leave the page first, so nothing on it asks again (and meets a 401); then forget this partner's data.
      await navigate('/sign-in', { replace: true });
      client.clear();
      notify('You are signed out.');
    },
  });
  return (
    <Button variant="subtle" leftSection={<IconLogout size={16} aria-hidden />} loading={signOut.isPending} onClick={() => signOut.mutate()}>
      Sign out
    </Button>
  );
}

export function PortalLayout() {
  const signedIn = useSignedIn();
  return (
    <Shell appName={APP_NAME} nav={signedIn ? NAV : []} actions={signedIn ? <SignOutButton /> : undefined}>
      <Outlet />
    </Shell>
  );
}

/** Pages of a signed-in partner: without a session, the sign-in page (which comes back here after). */
export function RequireSession() {
  const programs = useQuery(programsQuery);
  const location = useLocation();
  if (programs.isSuccess) return <Outlet />;
  if (isProblem(programs.error, 401)) return <Navigate to="/sign-in" replace state={{ from: location.pathname + location.search }} />;
  if (programs.isError) return <ProblemAlert error={programs.error} onRetry={() => void programs.refetch()} />;
  return <PageLoader label="Loading your programs" />;
}
