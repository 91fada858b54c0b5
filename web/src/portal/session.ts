import { queryOptions } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, type paths, unwrap } from '../api/client';

export type PortalSession = paths['/api/customer-portal/session']['get']['responses'][200]['content']['application/json'];

/**
 * Who is signed in, and to which store. A 401 means "signed out" and a 404 "this store's portal
 * is off": the layout and the pages answer those themselves (`anonymous`), so neither counts as
 * a session that ended mid-visit.
 */
export const sessionQuery = queryOptions({
  queryKey: ['session'],
  queryFn: () => unwrap(api.GET('/api/customer-portal/session')),
  meta: { anonymous: true },
  retry: false,
  staleTime: 5 * 60_000,
});

/** The store in the URL (`/portal/<workspace>/…`): its slug, or its id while it has none. */
export function useWorkspaceRef(): string {
  return useParams().workspace ?? '';
}

/** A path inside the store's portal (relative to the app's `/portal` base). */
export function portalPath(ref: string, path = ''): string {
  return `/${encodeURIComponent(ref)}${path ? `/${path}` : ''}`;
}

/**
 * Whether a session belongs to the store in the URL. A browser has one buyer session at a time:
 * signed in at one store and opening another's portal, the buyer signs in there (which replaces
 * it); the other store's data is never shown under this one's name.
 */
export function isSessionOf(session: PortalSession | undefined, ref: string): session is PortalSession {
  if (!session) return false;
  return ref === String(session.workspace.id) || (session.workspace.slug !== null && ref.toLowerCase() === session.workspace.slug);
}

/** The path of the session's own portal, for a sign-in link opened under another address of the store. */
export const ownRef = (session: PortalSession): string => session.workspace.slug ?? String(session.workspace.id);

/**
 * Where a buyer was headed when the portal asked them to sign in (a deep link, an expired
 * session). Kept in localStorage, because the e-mailed link usually opens in a new tab; a path
 * inside the same store's portal and nothing else.
 */
const AFTER_SIGN_IN = 'patchbay.portal.after-sign-in';

export const afterSignIn = {
  remember: (ref: string, path: string) => {
    if (path.startsWith(`${portalPath(ref)}/`) && !path.startsWith(portalPath(ref, 'sign-in'))) localStorage.setItem(AFTER_SIGN_IN, path);
  },
  take: (ref: string): string | null => {
    const path = localStorage.getItem(AFTER_SIGN_IN);
    localStorage.removeItem(AFTER_SIGN_IN);
    return path?.startsWith(`${portalPath(ref)}/`) ? path : null;
  },
};
