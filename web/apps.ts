/**
 * The front end's apps: one HTML entry each, served by the API process at `mount` (see
 * src/platform/http/web.ts, which keeps its own copy of this list: the server must not import
 * front-end code). Adding an app means a line here, its `<name>/index.html` and a route there.
 */
export const APPS = ['console', 'partner-portal', 'portal'] as const;
export type AppName = (typeof APPS)[number];

/** Where Vite's own URLs live: built assets in production, modules and HMR in development. */
export const WEB_BASE = '/web/';

/** Replaced by the server with a fresh nonce for every HTML answer (Content-Security-Policy). */
export const NONCE_PLACEHOLDER = '__PATCHBAY_CSP_NONCE__';
