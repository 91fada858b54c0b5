import { Navigate } from 'react-router';
import { captureFragment } from '../kit/fragment';
import { frameRoute, lazyPage, mountApp } from '../kit/mount';
import { Notices } from '../kit/Notices';
import { NotFoundPage } from '../kit/RouteError';
import { PortalLayout, RequireSession } from './PortalLayout';

// Sign-in and invitation links carry their token in the fragment: take it out of the address bar first.
captureFragment(['token']);

mountApp({
  basename: '/partner-portal',
  extras: <Notices />,
  // A session that ends while a page is open (signed out elsewhere, expired) leads back to sign-in.
  onUnauthenticated: (router, client) => {
    const { pathname, search } = router.state.location;
    // Already at sign-in (a sign-out's own navigation, say): nothing to lead anywhere.
    if (pathname === '/sign-in') return;
    client.clear();
    void router.navigate('/sign-in', { replace: true, state: { expired: true, from: pathname + search } });
  },
  routes: [
    frameRoute(<PortalLayout />, [
      { path: 'sign-in', ...lazyPage(() => import('./pages/SignInPage')) },
      { path: 'invitations', ...lazyPage(() => import('./pages/InvitationPage')) },
      {
        element: <RequireSession />,
        children: [
          { index: true, element: <Navigate to="/programs" replace /> },
          { path: 'programs', ...lazyPage(() => import('./pages/ProgramsPage')) },
          { path: 'programs/:id', ...lazyPage(() => import('./pages/ProgramPage')) },
          { path: 'accounting', ...lazyPage(() => import('./pages/AccountingPage')) },
          { path: 'payouts', ...lazyPage(() => import('./pages/PayoutsPage')) },
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ]),
  ],
});
