import { captureFragment } from '../kit/fragment';
import { frameRoute, lazyPage, mountApp } from '../kit/mount';
import { Notices } from '../kit/Notices';
import { NotFoundPage } from '../kit/RouteError';
import { checkoutRoutes } from './checkout/routes';
import { moneyRoutes } from './money/routes';
import { partnerRoutes } from './partners/routes';
import { productRoutes } from './products/routes';
import { recordRoutes } from './records/routes';
import { CONSOLE_NAV } from './sections';
import { ConsoleFrame, RequireMember } from './session/ConsoleFrame';
import { accountRoutes, outboxRoutes, signInRoute } from './session/routes';
import { sendSelectedWorkspace } from './session/workspace';
import { teamRoutes } from './team/routes';
import { webhookRoutes } from './webhooks/routes';

// Sign-in links carry their token in the fragment: take it out of the address bar before anything reads the URL.
captureFragment(['token']);
// Every developer request names the workspace the console acts in.
sendSelectedWorkspace();

mountApp({
  basename: '/console',
  extras: <Notices />,
  // A session that ends while a page is open (signed out elsewhere, expired, removed) leads back to sign-in.
  onUnauthenticated: async (router, client) => {
    const { pathname, search } = router.state.location;
    if (pathname === '/sign-in') return;
    await router.navigate('/sign-in', { replace: true, state: { expired: true, from: pathname + search } });
    // Forget what the ended session saw; reset rather than clear, so the frame's queries stay observed.
    await client.resetQueries();
  },
  routes: [
    frameRoute(<ConsoleFrame nav={CONSOLE_NAV} />, [
      signInRoute,
      { element: <RequireMember workspace={false} />, children: accountRoutes },
      {
        element: <RequireMember workspace />,
        children: [
          { index: true, ...lazyPage(() => import('./HomePage')) },
          ...recordRoutes,
          ...productRoutes,
          ...partnerRoutes,
          ...moneyRoutes,
          ...checkoutRoutes,
          ...webhookRoutes,
          ...teamRoutes,
          ...outboxRoutes,
        ],
      },
      { path: '*', element: <NotFoundPage /> },
    ]),
  ],
});
