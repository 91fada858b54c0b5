import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Scope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import type { ProductEnvironment } from '../../platform/db/schema.js';
import { type Executor, inTransaction } from '../../platform/db/transaction.js';
import { AppError, type FieldError } from '../../platform/http/errors.js';
import { randomSymbols } from '../../platform/ids/codes.js';
import type { LinkAnswer, LinkedObject, PrivateLinks } from '../../platform/links/private-links.js';
import type { PrivateStorage } from '../../platform/storage/storage.js';
import type { LicenseKeyring } from '../licensing/index.js';
import {
  type PackageStatusSource,
  type ProductCredentials,
  type ProductRecord,
  productRecordOrThrow,
  recordProductEvent,
  workspaceStorefront,
} from '../products/index.js';
import { buildArchive } from './package-archive.js';
import {
  EXPERIENCE_MODES,
  type ExperienceMode,
  PACKAGE_VARIANTS,
  type PackageVariant,
  RELEASE_CHANNELS,
  type ReleaseChannel,
  renderTemplates,
  TEMPLATE_VERSION,
  type TemplateValues,
} from './package-templates.js';
import { PackageErrors } from './packages.errors.js';
import * as repo from './packages.repo.js';
import { buildStorefrontArchive } from './storefront-package.js';

/** Package UI panels are at most this large (pixels, each side). */
export const MAX_UI_SIDE = 4096;
export const DEFAULT_SETTINGS = { experienceMode: 'validation-only' as ExperienceMode, uiWidth: 600, uiHeight: 400, releaseChannel: 'stable' as ReleaseChannel };
/** How long a build may hold a slot before another instance may take it (a crashed build). */
const SLOT_LEASE_SECONDS = 120;

export interface PackageSettingsInput {
  variant?: string | undefined;
  experienceMode?: string | undefined;
  uiWidth?: number | undefined;
  uiHeight?: number | undefined;
  releaseChannel?: string | undefined;
  environment?: ProductEnvironment | undefined;
}

export interface PackageSettings {
  variant: PackageVariant;
  experienceMode: ExperienceMode;
  uiWidth: number;
  uiHeight: number;
  releaseChannel: ReleaseChannel;
}

export interface PackageOptions {
  /** The service's public URL as plugins reach it. */
  publicBaseUrl: string;
  /** Builds at once across every instance (PACKAGE_BUILD_SLOTS). */
  buildSlots: number;
  /** How long a rotated key keeps working, per environment (seconds). */
  rotationOverlapSeconds: Record<ProductEnvironment, number>;
  /** Test hook: every build takes at least this long (slot tests). */
  minBuildMs?: number;
}

const oneOf = (values: readonly string[]) => `must be one of: ${values.join(', ')}`;

/** Checks package inputs; every bad field is named (400 VALIDATION_FAILED). */
export function checkSettings(input: PackageSettingsInput, saved: repo.SavedSettings | undefined, where: 'query' | 'body', variantRequired = true): PackageSettings {
  const errors: FieldError[] = [];
  const at = (field: string) => `${where}/${field}`;
  if (input.variant === undefined) {
    if (variantRequired) errors.push({ path: at('variant'), message: `is required (${PACKAGE_VARIANTS.join(' or ')}; choose explicitly)` });
  } else if (!(PACKAGE_VARIANTS as readonly string[]).includes(input.variant)) {
    errors.push({ path: at('variant'), message: oneOf(PACKAGE_VARIANTS) });
  }
  if (input.experienceMode !== undefined && !(EXPERIENCE_MODES as readonly string[]).includes(input.experienceMode)) {
    errors.push({ path: at('experienceMode'), message: oneOf(EXPERIENCE_MODES) });
  }
  if (input.releaseChannel !== undefined && !(RELEASE_CHANNELS as readonly string[]).includes(input.releaseChannel)) {
    errors.push({ path: at('releaseChannel'), message: oneOf(RELEASE_CHANNELS) });
  }
  for (const side of ['uiWidth', 'uiHeight'] as const) {
    const v = input[side];
    if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > MAX_UI_SIDE)) errors.push({ path: at(side), message: `must be a whole number from 1 to ${MAX_UI_SIDE}` });
  }
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', 'The package settings are invalid', { errors });
  return {
    variant: (input.variant ?? 'pluginscript') as PackageVariant,
    experienceMode: (input.experienceMode ?? saved?.experience_mode ?? DEFAULT_SETTINGS.experienceMode) as ExperienceMode,
    uiWidth: input.uiWidth ?? saved?.ui_width ?? DEFAULT_SETTINGS.uiWidth,
    uiHeight: input.uiHeight ?? saved?.ui_height ?? DEFAULT_SETTINGS.uiHeight,
    releaseChannel: (input.releaseChannel ?? saved?.release_channel ?? DEFAULT_SETTINGS.releaseChannel) as ReleaseChannel,
  };
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'product';

type Mode = 'get' | 'generate' | 'regenerate';

/**
 * Plugin packages: a zip built from the templates for one product, environment, variant and
 * settings, with the product key of that environment and the workspace's public keys pinned
 * in it. Archives are deterministic, so a build is named by the hash of its inputs: asking
 * again for the same inputs reuses the stored archive. Builds take one of a bounded number of
 * slots shared by every instance; archives live only in private storage and leave it only
 * through a signed, expiring link.
 */
export class PackageService implements PackageStatusSource {
  constructor(
    private readonly db: Db,
    private readonly storage: PrivateStorage,
    private readonly links: PrivateLinks,
    private readonly credentials: ProductCredentials,
    private readonly keyring: LicenseKeyring,
    private readonly options: PackageOptions,
  ) {
    links.register('packages', (id) => this.resolveLink(id));
  }

  /** GET plugin-package: a link to the package for these settings, built when there is none yet. */
  async download(scope: Scope, productId: number, input: PackageSettingsInput): Promise<LinkAnswer> {
    return this.produce(scope, productId, input, 'get');
  }

  /** POST generate: saves the settings given, builds with the saved settings and the current credential. */
  async generate(scope: Scope, productId: number, input: PackageSettingsInput): Promise<LinkAnswer> {
    return this.produce(scope, productId, input, 'generate');
  }

  /** POST regenerate: rotates the environment's product key deliberately, then builds. */
  async regenerate(scope: Scope, productId: number, input: PackageSettingsInput): Promise<LinkAnswer> {
    return this.produce(scope, productId, input, 'regenerate');
  }

  private async produce(scope: Scope, productId: number, input: PackageSettingsInput, mode: Mode): Promise<LinkAnswer> {
    const product = await productRecordOrThrow(this.db, scope, productId);
    const environment = input.environment ?? 'live';
    const where = mode === 'get' ? 'query' : 'body';
    const variant = input.variant;
    const saved = variant && (PACKAGE_VARIANTS as readonly string[]).includes(variant) ? await repo.savedSettings(this.db, scope, productId, variant) : undefined;
    const settings = checkSettings(input, saved, where);
    // Storage first: nothing is provisioned or rotated for a package that could not be kept (503).
    await this.storage.check();

    // Read first: provisioning (a write) only when the credential or its key is missing.
    let state = await this.credentials.read(scope, productId, environment);
    if (!state.credential || !state.key) state = await this.credentials.ensure(this.db, scope, product, environment);
    if (mode === 'regenerate' && !state.created) {
      const overlapUntil = new Date(Date.now() + this.options.rotationOverlapSeconds[environment] * 1000);
      await inTransaction(this.db, async (tx) => {
        await this.credentials.rotate(tx, scope, state.credential!.id, environment, overlapUntil);
        await recordProductEvent(tx, scope, { productId, kind: 'credential.rotated', data: { environment, previousKeyAcceptedUntil: overlapUntil.toISOString() } });
      });
      state = await this.credentials.ensure(this.db, scope, product, environment);
    }
    const productKey = state.key && !state.rotationRequired ? this.credentials.reveal(state.key) : null;
    if (!state.credential || !state.key || productKey === null) {
      throw new AppError(PackageErrors.PACKAGE_CREDENTIAL_ROTATION_REQUIRED, 'The product key of this environment cannot be recovered; regenerate the package to rotate it deliberately', {
        body: { rotationRequired: true, environment },
      });
    }
    if (mode === 'generate') {
      await repo.saveSettings(this.db, scope, productId, settings.variant, {
        experience_mode: settings.experienceMode,
        ui_width: settings.uiWidth,
        ui_height: settings.uiHeight,
        release_channel: settings.releaseChannel,
      });
    }

    const jwks = { keys: await this.keyring.publicKeys(scope.workspaceId) };
    const storefrontUrl = product.storefront_url ?? (await workspaceStorefront(this.db, scope)) ?? '';
    const values: TemplateValues = {
      variant: settings.variant,
      templateVersion: TEMPLATE_VERSION,
      productId: product.id,
      productName: product.name,
      appId: state.credential.app_id,
      productKey,
      environment,
      licensingBaseUrl: `${this.options.publicBaseUrl}/api/licensing/v1`,
      jwksJson: JSON.stringify(jwks),
      offlineGraceDays: product.offline_grace_days,
      offlineGraceSeconds: product.offline_grace_days * 86_400,
      experienceMode: settings.experienceMode,
      uiWidth: settings.uiWidth,
      uiHeight: settings.uiHeight,
      releaseChannel: settings.releaseChannel,
      storefrontUrl,
    };
    const inputHash = createHash('sha256').update(JSON.stringify(values)).digest('hex');
    const activity = { productId, accountId: scope.accountId || null, variant: settings.variant, environment, settings: { ...settings } };

    if (mode === 'get') {
      const existing = await repo.findBuild(this.db, scope, productId, inputHash);
      if (existing && (await this.storage.stat(existing.storage_key))) {
        await repo.recordActivity(this.db, scope.workspaceId, { ...activity, action: 'reused', buildId: existing.id, sha256: existing.sha256 });
        return this.links.linkFor('packages', existing.id, existing.filename);
      }
    }

    const build = await this.withSlot(() => this.build(scope, product, values, inputHash, state.key!.key_hash));
    await repo.recordActivity(this.db, scope.workspaceId, {
      ...activity,
      action: mode === 'get' ? 'built' : mode === 'generate' ? 'generated' : 'regenerated',
      buildId: build.id,
      sha256: build.sha256,
    });
    return this.links.linkFor('packages', build.id, build.filename);
  }

  private async build(scope: Scope, product: ProductRecord, values: TemplateValues, inputHash: string, keyHash: string): Promise<repo.BuildRecord> {
    const started = Date.now();
    const archive = buildArchive(`patchbay-${values.variant}`, renderTemplates(values), {
      packageFormat: 1,
      templateVersion: values.templateVersion,
      variant: values.variant,
      product: { id: product.id, name: product.name, appId: values.appId, environment: values.environment },
      settings: { experienceMode: values.experienceMode, uiWidth: values.uiWidth, uiHeight: values.uiHeight, releaseChannel: values.releaseChannel },
      licensing: {
        baseUrl: values.licensingBaseUrl,
        offlineGraceDays: values.offlineGraceDays,
        keyIds: (JSON.parse(values.jwksJson) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid),
      },
    });
    const storageKey = `ws${scope.workspaceId}/products/${product.id}/packages/${inputHash}.zip`;
    await this.storage.put(storageKey, Readable.from([archive.bytes]), { contentType: 'application/zip' });
    const wait = (this.options.minBuildMs ?? 0) - (Date.now() - started);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const filename = `${slug(product.name)}-${values.variant}-${values.environment}-${archive.sha256.slice(0, 12)}.zip`;
    return repo.upsertBuild(this.db, scope, {
      id: `pkg_${randomSymbols(20).toLowerCase()}`,
      product_id: product.id,
      environment: values.environment,
      variant: values.variant,
      input_hash: inputHash,
      key_hash: keyHash,
      settings: { experienceMode: values.experienceMode, uiWidth: values.uiWidth, uiHeight: values.uiHeight, releaseChannel: values.releaseChannel },
      template_version: values.templateVersion,
      storage_key: storageKey,
      filename,
      sha256: archive.sha256,
      size_bytes: archive.bytes.length,
    });
  }

  /** Runs `work` holding one of the build slots, or answers 429 PACKAGE_BUILD_BUSY. */
  private async withSlot<T>(work: () => Promise<T>): Promise<T> {
    const slots = this.options.buildSlots;
    const holder = randomUUID();
    await repo.ensureSlots(this.db, slots);
    const slot = await repo.claimSlot(this.db, slots, holder, SLOT_LEASE_SECONDS);
    if (slot === undefined) {
      const retry = await repo.soonestSlotSeconds(this.db, slots);
      throw new AppError(PackageErrors.PACKAGE_BUILD_BUSY, `All ${slots} package build slots are busy; retry the same request in a moment`, {
        headers: { 'retry-after': String(retry) },
      });
    }
    try {
      return await work();
    } finally {
      await repo.releaseSlot(this.db, slot, holder).catch(() => undefined);
    }
  }

  /** The storefront integration package: the workspace's catalogue for an in-plugin store panel. */
  async storefront(scope: Scope, input: { uiWidth?: number | undefined; uiHeight?: number | undefined }): Promise<LinkAnswer> {
    const settings = checkSettings({ ...input, variant: undefined }, undefined, 'query', false);
    await this.storage.check();
    const products = await repo.storefrontProducts(this.db, scope);
    const workspaceUrl = (await workspaceStorefront(this.db, scope)) ?? '';
    const archive = buildStorefrontArchive({ products, workspaceStorefrontUrl: workspaceUrl, uiWidth: settings.uiWidth, uiHeight: settings.uiHeight });
    const id = `sfp_${archive.sha256.slice(0, 32)}`;
    const storageKey = `ws${scope.workspaceId}/storefront/${id}.zip`;
    const build = await this.withSlot(async () => {
      await this.storage.put(storageKey, Readable.from([archive.bytes]), { contentType: 'application/zip' });
      return repo.upsertStorefrontBuild(this.db, scope, { id, storageKey, sha256: archive.sha256, size: archive.bytes.length });
    });
    await repo.recordActivity(this.db, scope.workspaceId, {
      productId: null,
      accountId: scope.accountId || null,
      action: 'storefront_built',
      buildId: build.id,
      settings: { uiWidth: settings.uiWidth, uiHeight: settings.uiHeight },
      sha256: archive.sha256,
    });
    return this.links.linkFor('packages', build.id, build.filename);
  }

  /** For the dashboard and plugin-package status. */
  async status(db: Executor, scope: Scope, productId: number, environment: ProductEnvironment) {
    const [state, statusFor] = await Promise.all([this.credentials.read(scope, productId, environment), this.statusFor(db, scope, productId, environment)]);
    return statusFor(state.key?.key_hash ?? null);
  }

  /** The status for whichever active key the caller holds: the builds are read once, the key is matched after. */
  async statusFor(db: Executor, scope: Scope, productId: number, environment: ProductEnvironment) {
    const builds = await repo.packageBuilds(db, scope, productId, environment);
    return (keyHash: string | null) => {
      const last = builds.reduce<Date | null>((latest, r) => (latest === null || r.last > latest ? r.last : latest), null);
      const variants = [...new Set(builds.filter((r) => keyHash !== null && r.key_hash === keyHash).map((r) => r.variant))].sort();
      return {
        packageReady: variants.length > 0,
        lastGeneratedAt: last,
        variants,
        rotationOverlapSeconds: this.options.rotationOverlapSeconds[environment],
      };
    };
  }

  private async resolveLink(buildId: string): Promise<LinkedObject | null> {
    const build = await repo.buildForLink(this.db, buildId);
    if (!build) return null;
    const body = await this.storage.get(build.storage_key);
    return {
      body,
      filename: build.filename,
      contentType: 'application/zip',
      size: build.size_bytes,
      completed: () =>
        repo.recordActivity(this.db, build.workspace_id, {
          productId: build.product_id,
          accountId: null,
          action: 'downloaded',
          buildId: build.id,
          variant: build.variant,
          environment: build.environment,
          sha256: build.sha256,
        }),
    };
  }
}
