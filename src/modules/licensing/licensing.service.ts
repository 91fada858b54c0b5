import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, type ErrorCode } from '../../platform/http/errors.js';
import { serialKey } from '../../platform/ids/codes.js';
import { announceSerialChanges, onSerialChanges, recordSerialEvents, remainingActivations } from '../serials/index.js';
import { ValidateCache, type ValidateEntry } from './licensing.cache.js';
import { LicensingErrors } from './licensing.errors.js';
import type { LicenseKeyring } from './licensing.keys.js';
import * as repo from './licensing.repo.js';
import type { ActivateBody, DeactivateBody, ValidateBody, ValidationCode } from './licensing.schemas.js';
import { signLicenseToken } from './licensing.token.js';
import type { ConnectionTracker } from './licensing.connections.js';
import { keyForRuntime, productKeyHash } from '../products/index.js';
import { emitWebhookEvent } from '../webhooks/index.js';

const DAY = 86_400_000;
// Short, like validate's own cache: a product's offline grace shapes the token, so a change to it
// reaches every instance within the same few seconds.
const TARGET_CACHE_MS = 4_000;
const TARGET_CACHE_SIZE = 10_000;
// Validation refreshes "last seen" at most this often, so the hot path stays read-only.
const TOUCH_INTERVAL = 3_600_000;

type Refusal = Exclude<ValidationCode, 'VALID' | 'NOT_FOUND' | 'MACHINE_NOT_ACTIVATED'>;

const REFUSAL_DETAIL: Record<Refusal, string> = {
  REVOKED: 'This serial was revoked.',
  SUSPENDED: 'This serial is suspended. Contact the vendor.',
  DEACTIVATED: 'This serial is deactivated.',
  NOT_ACTIVE_YET: 'This serial is not active yet.',
  EXPIRED: 'This serial has expired.',
};

const REFUSAL_ERROR: Record<Refusal, ErrorCode> = {
  REVOKED: LicensingErrors.LICENSE_REVOKED,
  SUSPENDED: LicensingErrors.LICENSE_SUSPENDED,
  DEACTIVATED: LicensingErrors.LICENSE_DEACTIVATED,
  NOT_ACTIVE_YET: LicensingErrors.LICENSE_NOT_ACTIVE_YET,
  EXPIRED: LicensingErrors.LICENSE_EXPIRED,
};

/** Why a serial cannot be used right now, or null when it can. */
export function refusal(serial: repo.RuntimeSerial, now: Date): Refusal | null {
  if (serial.status === 'revoked') return 'REVOKED';
  if (serial.status === 'suspended') return 'SUSPENDED';
  if (serial.status === 'deactivated') return 'DEACTIVATED';
  if (serial.active_from && serial.active_from > now) return 'NOT_ACTIVE_YET';
  if ((serial.expires_at && serial.expires_at <= now) || (serial.active_to && serial.active_to <= now)) return 'EXPIRED';
  return null;
}

/** Offline grace, never beyond the serial's own end. */
function tokenExpiry(target: repo.LicenseTarget, serial: repo.RuntimeSerial, now: Date): Date {
  const ends = [new Date(now.getTime() + target.offlineGraceDays * DAY), serial.expires_at, serial.active_to].filter((d): d is Date => d !== null);
  return new Date(Math.min(...ends.map((d) => d.getTime())));
}

const seatState = (s: repo.RuntimeSerial, active: number) => ({
  status: s.status,
  maxActivations: s.max_activations,
  activeActivations: active,
  remainingActivations: remainingActivations(s.status, s.max_activations, active),
  expiresAt: s.expires_at?.toISOString() ?? null,
});

const notFound = () => new AppError(LicensingErrors.LICENSE_NOT_FOUND, 'No such serial for this product');

const KEY_CACHE_MS = 30_000;

export class LicensingService {
  /** Validate's answers for a few seconds (see licensing.cache.ts); serial changes of this process drop them at once. */
  private readonly validations = new ValidateCache();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly db: Db,
    private readonly keyring: LicenseKeyring,
    private readonly connections?: ConnectionTracker,
  ) {
    this.unsubscribe = onSerialChanges((change) => this.validations.forget(change.workspaceId, change.serialIds));
  }

  /** Stops listening for serial changes (when the app closes). */
  close(): void {
    this.unsubscribe();
  }

  // Product keys by hash, for at most 30 s: a revoked or expired key stops working within that.
  private readonly keys = new Map<string, { credentialId: number; acceptedUntil: number | null; until: number } | null>();

  /**
   * The product an appId names, after checking the product key when the plugin sends one
   * (packages embed it): a key of another product or environment, or one retired past its
   * overlap, answers 401 INVALID_PRODUCT_KEY. The call is noted for the connection status.
   */
  private async authenticate(productAppId: string, productKey: string | undefined): Promise<repo.LicenseTarget | undefined> {
    const target = await this.target(productAppId);
    if (!target) return undefined;
    if (productKey !== undefined) {
      const key = await this.keyFor(productKey);
      if (!key || key.credentialId !== target.credentialId || (key.acceptedUntil !== null && key.acceptedUntil <= Date.now())) {
        throw new AppError(LicensingErrors.INVALID_PRODUCT_KEY, 'The product key does not belong to this appId (or is no longer accepted)', {
          headers: { 'www-authenticate': 'ProductKey' },
        });
      }
    }
    this.connections?.note(target.credentialId, productKey !== undefined);
    return target;
  }

  private async keyFor(productKey: string) {
    const hash = productKeyHash(productKey);
    const hit = this.keys.get(hash);
    if (hit !== undefined && (hit === null || hit.until > Date.now())) return hit;
    const row = await keyForRuntime(this.db, productKey);
    const entry = row
      ? { credentialId: row.credential_id, acceptedUntil: row.status === 'retiring' && row.accepted_until ? new Date(row.accepted_until).getTime() : null, until: Date.now() + KEY_CACHE_MS }
      : null;
    if (this.keys.size >= TARGET_CACHE_SIZE) this.keys.delete(this.keys.keys().next().value!);
    // Unknown keys are remembered too (briefly), so a flood of bad keys costs no queries.
    this.keys.set(hash, entry ?? null);
    if (!entry) setTimeout(() => this.keys.delete(hash), KEY_CACHE_MS).unref();
    return entry;
  }

  // Products change rarely and every runtime call resolves one: a short-lived
  // cache saves a round trip on the hot path. Unknown ids are not cached.
  private readonly targets = new Map<string, { target: repo.LicenseTarget; until: number }>();

  private async target(productAppId: string): Promise<repo.LicenseTarget | undefined> {
    const now = Date.now();
    const hit = this.targets.get(productAppId);
    if (hit && hit.until > now) return hit.target;
    const target = await repo.findTarget(this.db, productAppId);
    if (target) {
      if (this.targets.size >= TARGET_CACHE_SIZE) this.targets.delete(this.targets.keys().next().value!);
      this.targets.set(productAppId, { target, until: now + TARGET_CACHE_MS });
    }
    return target;
  }

  /**
   * Claims a seat for a machine. The serial row is locked before seats are
   * counted, so two machines racing for the last seat cannot both win. The
   * same machine again is idempotent (200, same activation). The customer portal's offline
   * activation comes through here too, with the buyer as the claimant of the seat.
   */
  async activate(input: ActivateBody, productKey?: string, claimant?: repo.SeatClaimant) {
    const target = await this.authenticate(input.productAppId, productKey);
    if (!target) throw notFound();
    const now = new Date();
    const machine = {
      machineId: input.machineId,
      machineName: input.machineName ?? null,
      platform: input.platform ?? null,
      appVersion: input.appVersion ?? null,
    };
    const result = await inTransaction(this.db, async (tx) => {
      // One statement locks the serial and takes a seat when one is free; the rest only runs when it took none.
      const claim = await repo.claimSeat(tx, target, serialKey(input.serial), machine, now, claimant);
      if (!claim) throw notFound();
      const { serial, activation } = claim;
      // (Were the statement's test and this one ever to disagree, the throw rolls the seat back.)
      const refused = refusal(serial, now);
      if (refused) throw new AppError(REFUSAL_ERROR[refused], REFUSAL_DETAIL[refused], { body: { reason: refused } });

      if (!activation) {
        const existing = await repo.activeActivation(tx, target, serial.id, input.machineId);
        if (existing) {
          await repo.touchActivation(tx, target, existing.id, machine);
          return { created: false, serial, activation: existing, active: serial.active_activation_count };
        }
        if (serial.active_activation_count >= serial.max_activations) {
          throw new AppError(
            LicensingErrors.MACHINE_LIMIT_EXCEEDED,
            `All ${serial.max_activations} seats of this serial are in use. Deactivate another machine first.`,
            { body: { maxActivations: serial.max_activations, activeActivations: serial.active_activation_count } },
          );
        }
        throw new Error(`licensing: serial ${serial.id} had a free seat but none was taken for the machine`);
      }
      await emitWebhookEvent(tx, target.workspaceId, 'activation.created', {
        activation_id: activation.id, serial_id: serial.id, product_id: target.productId, machine_id: activation.machine_id, machine_name: activation.machine_name,
        platform: activation.platform, app_version: activation.app_version, activated_at: activation.activated_at.toISOString(), via: claimant?.type === 'customer' ? 'customer_portal' : 'runtime',
      });
      announceSerialChanges(tx, target.workspaceId, [serial.id]);
      const redeem = serial.status === 'available';
      const updated = { ...serial, status: redeem ? ('redeemed' as const) : serial.status, redeemed_at: serial.redeemed_at ?? now };
      return { created: true, serial: updated, activation, active: serial.active_activation_count + 1 };
    });

    const expiresAt = tokenExpiry(target, result.serial, now);
    const token = await signLicenseToken(await this.keyring.signingKey(target.workspaceId), {
      productAppId: target.productAppId,
      serialId: result.serial.id,
      serial: result.serial.code,
      machineId: input.machineId,
      activationId: result.activation.id,
      expiresAt,
      nonce: input.nonce ?? null,
    }, now);
    return {
      created: result.created,
      body: {
        activation: {
          id: result.activation.id,
          machineId: result.activation.machine_id,
          machineName: result.activation.machine_name ?? machine.machineName,
          platform: result.activation.platform ?? machine.platform,
          appVersion: result.activation.app_version ?? machine.appVersion,
          activatedAt: result.activation.activated_at.toISOString(),
        },
        serial: seatState(result.serial, result.active),
        token,
        tokenExpiresAt: expiresAt.toISOString(),
        nonce: input.nonce ?? null,
      },
    };
  }

  /**
   * Always an answer, never an HTTP error: an unusable serial is data the plugin acts on. What it
   * reads is cached per (product app, serial, machine) for a few seconds, and the signed token with
   * it for a repeat of the same nonce; the refusal rules and the token's expiry are checked against
   * the clock on every call, so a cached answer never outlives the serial's window or its token.
   */
  async validate(input: ValidateBody, productKey?: string) {
    const nonce = input.nonce ?? null;
    const answer = (code: ValidationCode, detail: string) => ({ valid: false, code, detail, nonce });
    const target = await this.authenticate(input.productAppId, productKey);
    if (!target) return answer('NOT_FOUND', 'No such serial for this product.');
    const codeKey = serialKey(input.serial);
    const cacheKey = ValidateCache.key(target, codeKey, input.machineId);
    let entry = this.validations.get(cacheKey, target);
    if (!entry) {
      const readFrom = this.validations.beginRead();
      const startedAt = Date.now();
      const row = await repo.serialWithMachine(this.db, target, codeKey, input.machineId);
      if (!row) return answer('NOT_FOUND', 'No such serial for this product.');
      entry = { row, offlineGraceDays: target.offlineGraceDays, readFrom };
      this.validations.set(cacheKey, entry, startedAt);
    }
    const row = entry.row;
    const now = new Date();
    const refused = refusal(row, now);
    if (refused) return answer(refused, REFUSAL_DETAIL[refused]);
    if (row.activation_id === null) return answer('MACHINE_NOT_ACTIVATED', 'This machine has no active seat for this serial. Activate it first.');

    if (row.last_validated_at && now.getTime() - row.last_validated_at.getTime() > TOUCH_INTERVAL) {
      await repo.touchActivation(this.db, target, row.activation_id);
      entry.row = { ...row, last_validated_at: now };
    }
    const token = await this.validationToken(entry, target, input.machineId, nonce, now);
    return { valid: true, code: 'VALID' as const, detail: 'The serial is valid on this machine.', nonce, token: token.token, tokenExpiresAt: token.expiresAt.toISOString() };
  }

  /** The token signed for this answer a moment ago if the nonce is the same and it has not expired (to the second), else a new one. */
  private async validationToken(entry: ValidateEntry, target: repo.LicenseTarget, machineId: string, nonce: string | null, now: Date) {
    const kept = entry.token;
    if (kept && kept.nonce === nonce && Math.floor(kept.expiresAt.getTime() / 1000) * 1000 > now.getTime()) return kept;
    const row = entry.row;
    const expiresAt = tokenExpiry(target, row, now);
    const token = await signLicenseToken(await this.keyring.signingKey(target.workspaceId), {
      productAppId: target.productAppId,
      serialId: row.id,
      serial: row.code,
      machineId,
      activationId: row.activation_id!,
      expiresAt,
      nonce,
    }, now);
    entry.token = { nonce, token, expiresAt };
    return entry.token;
  }

  /** Self-service seat release; idempotent. Works whatever the serial's state, so a seat can always be freed. */
  async deactivate(input: DeactivateBody, productKey?: string) {
    const target = await this.authenticate(input.productAppId, productKey);
    if (!target) throw notFound();
    return inTransaction(this.db, async (tx) => {
      const serial = await repo.lockSerial(tx, target, serialKey(input.serial));
      if (!serial) throw notFound();
      const activation = await repo.activeActivation(tx, target, serial.id, input.machineId);
      if (!activation) return { released: false, serial: seatState(serial, serial.active_activation_count) };
      await repo.releaseActivation(tx, target, activation.id);
      await repo.adjustSeatCount(tx, target, serial.id, -1, false);
      announceSerialChanges(tx, target.workspaceId, [serial.id]);
      await emitWebhookEvent(tx, target.workspaceId, 'activation.released', { activation_id: activation.id, serial_id: serial.id, product_id: target.productId, machine_id: input.machineId, released_by: 'runtime', reason: null });
      await recordSerialEvents(tx, target.workspaceId, [
        {
          serialId: serial.id,
          action: 'runtime.deactivated',
          actorType: 'runtime',
          actorAccountId: null,
          beforeStatus: serial.status,
          afterStatus: serial.status,
          data: { activationId: activation.id, machineId: input.machineId },
        },
      ]);
      return { released: true, serial: seatState(serial, Math.max(0, serial.active_activation_count - 1)) };
    });
  }

  async jwks(productAppId: string) {
    const target = await this.target(productAppId);
    if (!target) throw new AppError(LicensingErrors.LICENSE_NOT_FOUND, 'Unknown productAppId');
    return { keys: await this.keyring.publicKeys(target.workspaceId) };
  }
}
