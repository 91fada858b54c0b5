// The customer portal's face: buyers' sessions (a third kind of caller, with its own scope), their
// orders, licenses and devices, offline activation, downloads and "resend my keys", and the
// workspace's portal settings. app.ts, the CLI and fixtures import this file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { CustomerSessionVerifier } from '../../platform/auth/policy.js';
import type { Db } from '../../platform/db/database.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { PrivateLinks } from '../../platform/links/private-links.js';
import type { LinkTokens } from '../../platform/mail/link-tokens.js';
import type { PrivateStorage } from '../../platform/storage/storage.js';
import type { LicensingService } from '../licensing/index.js';
import { downloadRoutes, licenseRoutes, orderRoutes, sessionRoutes, settingsRoutes } from './customer-portal.routes.js';
import { PortalDownloads } from './downloads.service.js';
import { DEFAULT_DEVICE_RELEASES_PER_SERIAL, PortalLicenses } from './licenses.service.js';
import { readMachineRequestFile } from './machine-request.js';
import { registerPortalJobs } from './customer-portal.jobs.js';
import { CustomerSessions, normaliseEmail } from './sessions.service.js';

export { changePortalSettings, isSlug, portalSettings, setPortalSettings } from './settings.service.js';
export { SLUG_PATTERN } from './customer-portal.schemas.js';
export { CustomerSessions } from './sessions.service.js';
export { DEFAULT_DEVICE_RELEASES_PER_SERIAL } from './licenses.service.js';
/** Named in the OpenAPI document. */
export { DownloadRow as PortalDownloadRow, LicenseRow as PortalLicenseRow, OrderRow as PortalOrderRow, PortalSettings } from './customer-portal.schemas.js';

export const DEFAULT_PORTAL_SIGN_IN_LINKS_PER_HOUR = 5;
export const DEFAULT_KEY_RESENDS_PER_HOUR = 3;
const MINUTE = 60_000;

export interface CustomerPortal {
  sessions: CustomerSessions;
  /** What the policy hook resolves buyer sessions with. */
  verify: CustomerSessionVerifier;
}

/** Made before the policy hook is registered (it verifies buyer sessions); the routes come with `register`. */
export function createCustomerPortal(db: Db, publicBaseUrl: string, linkTokens: LinkTokens): CustomerPortal {
  const sessions = new CustomerSessions(db, publicBaseUrl, linkTokens);
  return { sessions, verify: (token) => sessions.verify(token) };
}

export interface CustomerPortalDeps {
  db: Db;
  portal: CustomerPortal;
  runner: JobRunner;
  licensing: LicensingService;
  storage: PrivateStorage;
  links: PrivateLinks;
  publicBaseUrl: string;
  /** PORTAL_DEVICE_RELEASES_PER_SERIAL_PER_30_DAYS */
  releasesPerSerial?: number | undefined;
  linksPerHour?: number | undefined;
  keyResendsPerHour?: number | undefined;
}

export function register(app: FastifyInstance, deps: CustomerPortalDeps): void {
  const { db, portal, runner } = deps;
  const linksPerHour = deps.linksPerHour ?? DEFAULT_PORTAL_SIGN_IN_LINKS_PER_HOUR;
  const keyResendsPerHour = deps.keyResendsPerHour ?? DEFAULT_KEY_RESENDS_PER_HOUR;
  const releasesPerSerial = deps.releasesPerSerial ?? DEFAULT_DEVICE_RELEASES_PER_SERIAL;
  const body = (req: { body?: unknown }) => (req.body ?? {}) as { workspace?: unknown; email?: unknown };
  const limits = {
    link: enforceLimits(app, [
      { max: linksPerHour, windowMs: 60 * MINUTE, key: (req) => `pcl:${String(body(req).workspace ?? '').toLowerCase()}:${normaliseEmail(String(body(req).email ?? ''))}` },
      { max: linksPerHour * 4, windowMs: 60 * MINUTE, key: (req) => `pcl:ip:${req.ip}` },
    ]),
    signIn: enforceLimits(app, [{ max: 30, windowMs: MINUTE, key: (req) => `pcs:ip:${req.ip}` }]),
    keyResend: enforceLimits(app, [{ max: keyResendsPerHour, windowMs: 60 * MINUTE, key: (req) => `pck:${req.customer?.workspaceId}:${req.customer?.customerId}` }]),
  };
  const routeDeps = {
    db,
    publicBaseUrl: deps.publicBaseUrl,
    sessions: portal.sessions,
    licenses: new PortalLicenses(db, deps.licensing, releasesPerSerial),
    downloads: new PortalDownloads(db, deps.storage, deps.links),
    releasesPerSerial,
    linksPerHour,
    keyResendsPerHour,
    limits,
    readMachineRequestFile,
  };
  registerRoutes(app, [...sessionRoutes(routeDeps), ...orderRoutes(routeDeps), ...licenseRoutes(routeDeps), ...downloadRoutes(routeDeps), ...settingsRoutes(routeDeps)]);
  registerPortalJobs(runner, portal.sessions);
}
