import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import { Allowed } from './ConsoleFrame';

/** Signing in: the one page without a session. */
export const signInRoute: RouteObject = { path: 'sign-in', ...lazyPage(() => import('./SignInPage')) };

/** Pages of a signed-in account before a workspace is chosen. */
export const accountRoutes: RouteObject[] = [{ path: 'workspaces', ...lazyPage(() => import('./WorkspacesPage')) }];

/** The development outbox: owners only (its navigation entry appears only where the route exists). */
export const outboxRoutes: RouteObject[] = [{ element: <Allowed permission={null} owner />, children: [{ path: 'outbox', ...lazyPage(() => import('./OutboxPage')) }] }];
