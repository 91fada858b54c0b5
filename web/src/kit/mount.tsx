import type { QueryClient } from '@tanstack/react-query';
import { type ComponentType, type ReactNode, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, type RouteObject } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { PageLoader } from './PageLoader';
import { AppProviders } from './providers';
import { createQueryClient } from './query-client';
import { RouteError } from './RouteError';

type Router = ReturnType<typeof createBrowserRouter>;

/** A page loaded on first visit: each page is its own chunk, so an app's first load carries only its frame. */
export const lazyPage = (load: () => Promise<{ default: ComponentType }>): Pick<RouteObject, 'lazy'> => ({
  lazy: async () => ({ Component: (await load()).default }),
});

/** The route around an app's pages: its frame, what a failing page shows, and what shows while the first page loads. */
export const frameRoute = (element: ReactNode, children: RouteObject[], path?: string): RouteObject => ({
  ...(path ? { path } : {}),
  element,
  errorElement: <RouteError />,
  hydrateFallbackElement: <PageLoader />,
  children,
});

/**
 * Starts an app at `basename` (its URL prefix, which the server answers with the app's page).
 * `onUnauthenticated` runs when a request answers 401 (see createQueryClient); `extras` render
 * beside the router (notifications).
 */
export function mountApp(options: { basename: string; routes: RouteObject[]; onUnauthenticated?: (router: Router, client: QueryClient) => void; extras?: ReactNode }): void {
  const router = createBrowserRouter(options.routes, { basename: options.basename });
  const client: QueryClient = createQueryClient(options.onUnauthenticated ? () => options.onUnauthenticated!(router, client) : undefined);
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <AppProviders client={client}>
        {options.extras}
        <RouterProvider router={router} />
      </AppProviders>
    </StrictMode>,
  );
}
