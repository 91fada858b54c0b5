import { Navigate, Outlet } from 'react-router';
import { captureFragment } from '../kit/fragment';
import { frameRoute, lazyPage, mountApp } from '../kit/mount';
import { NotFoundPage } from '../kit/RouteError';
import { Shell } from '../kit/Shell';
import { APP_NAME, PortalLayout, RequireSession } from './PortalLayout';

// The e-mailed sign-in link carries its token in the fragment: take it out of the address bar first.
captureFragment(['token']);

// The buyers' portal of a workspace, at /portal/<workspace>/ (its slug or id). Every page is a chunk
// of its own: the first load carries the frame and nothing else (a budget of 150 KB gzipped).
mountApp({
  basename: '/portal',
  // A session that ends while a page is open (signed out elsewhere, expired) leads back to the store's sign-in.
  onUnauthenticated: (router, client) => {
    client.clear();
    const { pathname, search } = router.state.location;
    const [, workspace, page] = pathname.split('/');
    // Already at sign-in (a sign-out's own navigation, say): nothing to lead anywhere.
    if (workspace && page !== 'sign-in') void router.navigate(`/${workspace}/sign-in`, { replace: true, state: { expired: true, from: pathname + search } });
  },
  routes: [
    frameRoute(
      <PortalLayout />,
      [
        { path: 'sign-in', ...lazyPage(() => import('./pages/SignInPage')) },
        {
          element: <RequireSession />,
          children: [
            { index: true, element: <Navigate to="licenses" replace /> },
            { path: 'licenses', ...lazyPage(() => import('./pages/LicensesPage')) },
            { path: 'downloads', ...lazyPage(() => import('./pages/DownloadsPage')) },
            { path: 'orders', ...lazyPage(() => import('./pages/OrdersPage')) },
            { path: 'orders/:orderId', ...lazyPage(() => import('./pages/OrderPage')) },
            { path: 'offline-activation', ...lazyPage(() => import('./pages/OfflineActivationPage')) },
          ],
        },
        { path: '*', element: <NotFoundPage home=".." /> },
      ],
      ':workspace',
    ),
    // /portal/ alone names no store: say where a buyer finds their store's address.
    frameRoute(
      <Shell appName={APP_NAME} nav={[]}>
        <Outlet />
      </Shell>,
      [{ index: true, ...lazyPage(() => import('./pages/NoStorePage')) }],
    ),
  ],
});
