// The packages module's face: plugin packages and the storefront package. app.ts imports this file
// only. The service is made first (the products dashboard reports its status); the routes come with
// `register`.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import { enforceLimits } from '../../platform/http/rate-limits.js';
import type { PrivateLinks } from '../../platform/links/private-links.js';
import type { PrivateStorage } from '../../platform/storage/storage.js';
import type { LicenseKeyring } from '../licensing/index.js';
import type { ProductCredentials } from '../products/index.js';
import { packageRoutes } from './packages.routes.js';
import { type PackageOptions, PackageService } from './packages.service.js';

export type { PackageService } from './packages.service.js';

export const DEFAULT_PACKAGE_BUILD_SLOTS = 2;
export const DEFAULT_LIVE_ROTATION_OVERLAP_DAYS = 7;
export const DEFAULT_PACKAGE_DOWNLOADS_PER_MINUTE = 30;

export interface PackagesDeps {
  db: Db;
  storage: PrivateStorage;
  links: PrivateLinks;
  credentials: ProductCredentials;
  keyring: LicenseKeyring;
  /** The service's public URL as plugins reach it. */
  publicBaseUrl: string;
  /** Builds at once across every instance (PACKAGE_BUILD_SLOTS). */
  buildSlots?: number | undefined;
  /** How long a rotated live key keeps working. */
  liveRotationOverlapDays?: number | undefined;
  /** Test hook: every build takes at least this long. */
  minBuildMs?: number | undefined;
}

export function createPackages({ db, storage, links, credentials, keyring, publicBaseUrl, ...options }: PackagesDeps): PackageService {
  const settings: PackageOptions = {
    publicBaseUrl,
    buildSlots: options.buildSlots ?? DEFAULT_PACKAGE_BUILD_SLOTS,
    rotationOverlapSeconds: { live: (options.liveRotationOverlapDays ?? DEFAULT_LIVE_ROTATION_OVERLAP_DAYS) * 86_400, test: 0 },
    ...(options.minBuildMs ? { minBuildMs: options.minBuildMs } : {}),
  };
  return new PackageService(db, storage, links, credentials, keyring, settings);
}

export function register(app: FastifyInstance, { packages, downloadsPerMinute = DEFAULT_PACKAGE_DOWNLOADS_PER_MINUTE }: { packages: PackageService; downloadsPerMinute?: number | undefined }): void {
  // GET plugin-package builds on demand: bound per product so a polling integration cannot keep the slots busy.
  const perProduct = enforceLimits(app, [
    { max: downloadsPerMinute, windowMs: 60_000, key: (req) => `pkg:${req.scope?.workspaceId}:${(req.params as { productId: number }).productId}` },
  ]);
  registerRoutes(app, packageRoutes({ packages, downloadsPerMinute, perProduct }));
}
