import type { CustomerScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { enqueueEmail } from '../../platform/mail/mail.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { serialKey } from '../../platform/ids/codes.js';
import { type ActivateBody, LicensingErrors, type LicensingService } from '../licensing/index.js';
import { CUSTOMER_PORTAL_KEYS_EMAIL } from './customer-portal.emails.js';
import { PortalErrors } from './customer-portal.errors.js';
import type { LicenseRow } from './customer-portal.schemas.js';
import * as repo from './licenses.repo.js';
import { emitWebhookEvent } from '../webhooks/index.js';
import { announceSerialChanges } from '../serials/index.js';

/** The window of the device-release limit. */
export const RELEASE_WINDOW_DAYS = 30;
export const DEFAULT_DEVICE_RELEASES_PER_SERIAL = 3;

/** What an offline activation's license file says: the format name a plugin package checks first. */
export const LICENSE_FILE_FORMAT = 'patchbay-license/1';

// Times inside JSON come back as PostgreSQL's text form; answers carry ISO 8601.
const iso = (text: string) => new Date(text).toISOString();

function toLicenseRow(serial: repo.LicenseRecord & { seats: repo.SeatRecord[] }): LicenseRow {
  return {
    serial_id: serial.id,
    serial: serial.code,
    product_id: serial.product_id,
    product: serial.product,
    status: serial.status,
    expires_at: serial.expires_at ? serial.expires_at.toISOString() : null,
    max_activations: serial.max_activations,
    active_activation_count: serial.active_activation_count,
    activations: serial.seats.map((a) => ({ id: a.id, machine_name: a.machine_name, first_seen_at: iso(a.activated_at), last_seen_at: iso(a.last_validated_at) })),
  };
}

/**
 * The buyer's licenses: their serials with the devices holding seats, releasing a device, and
 * activating a studio computer without internet (the machine request file in, a license file out).
 */
export class PortalLicenses {
  constructor(
    private readonly db: Db,
    private readonly licensing: LicensingService,
    private readonly releasesPerSerial: number,
  ) {}

  async list(customer: CustomerScope): Promise<{ rows: LicenseRow[] }> {
    return { rows: (await repo.licensesWithSeats(this.db, customer)).map(toLicenseRow) };
  }

  private async one(customer: CustomerScope, serialId: number): Promise<LicenseRow> {
    const [serial] = await repo.licensesWithSeats(this.db, customer, serialId);
    if (!serial) throw notFound('License');
    return toLicenseRow(serial);
  }

  /**
   * Frees one seat of the buyer's serial. The serial row is locked before the releases of the
   * last 30 days are counted and the seat is freed, so parallel releases cannot pass the limit
   * together. A seat that is already free answers the license unchanged and counts nothing. A
   * suspended or revoked serial is the vendor's to decide about: nothing is released.
   */
  async releaseDevice(customer: CustomerScope, serialId: number, activationId: number): Promise<LicenseRow> {
    await inTransaction(this.db, async (tx) => {
      const serial = await repo.lockLicense(tx, customer, serialId);
      if (!serial) throw notFound('License');
      const seat = await repo.findSeat(tx, customer, serialId, activationId);
      if (!seat) throw notFound('Activation');
      if (serial.status === 'suspended' || serial.status === 'revoked') {
        throw new AppError(PortalErrors.SERIAL_NOT_RELEASABLE, `This serial is ${serial.status}; contact the vendor about its devices`, { body: { serialStatus: serial.status } });
      }
      if (seat.status !== 'active') return;
      const recent = await repo.portalReleasesWithin(tx, customer.workspaceId, serialId, RELEASE_WINDOW_DAYS);
      if (recent.count >= this.releasesPerSerial) {
        const nextAt = recent.nextAt ?? new Date(Date.now() + RELEASE_WINDOW_DAYS * 86_400_000);
        const seconds = Math.max(1, Math.ceil((nextAt.getTime() - Date.now()) / 1000));
        throw new AppError(
          PortalErrors.DEVICE_RELEASE_LIMIT,
          `${this.releasesPerSerial} devices of this serial were released in the last ${RELEASE_WINDOW_DAYS} days; the next release is possible at ${nextAt.toISOString()}, or ask the vendor`,
          { headers: { 'retry-after': String(seconds) }, body: { limit: this.releasesPerSerial, windowDays: RELEASE_WINDOW_DAYS, nextReleaseAt: nextAt.toISOString() } },
        );
      }
      if (await repo.releaseSeat(tx, customer, serial, activationId)) {
        announceSerialChanges(tx, customer.workspaceId, [serialId]);
        await emitWebhookEvent(tx, customer.workspaceId, 'activation.released', { activation_id: activationId, serial_id: serialId, product_id: serial.product_id, machine_id: seat.machine_id, released_by: 'customer_portal', reason: null });
      }
    });
    return this.one(customer, serialId);
  }

  /** "Resend my keys": an e-mail listing the buyer's keys, queued here and written when it is sent. */
  async resendKeys(customer: CustomerScope): Promise<void> {
    await inTransaction(this.db, (tx) => enqueueEmail(tx, { workspaceId: customer.workspaceId }, CUSTOMER_PORTAL_KEYS_EMAIL, { customerId: customer.customerId }));
  }

  /**
   * An offline activation: the machine request a plugin wrote (product, serial, machine, nonce)
   * takes one seat of the buyer's serial and yields the license token the runtime would have
   * issued to that machine online (Ed25519, bound to the machine, valid for the offline grace).
   */
  async activateOffline(customer: CustomerScope, serialId: number, request: ActivateBody) {
    const serial = await repo.findLicense(this.db, customer, serialId);
    if (!serial) throw notFound('License');
    if (serialKey(request.serial) !== serial.code_key) {
      throw new AppError(PortalErrors.MACHINE_REQUEST_MISMATCH, 'The machine request names another serial than this license');
    }
    let result: Awaited<ReturnType<LicensingService['activate']>>;
    try {
      result = await this.licensing.activate(request, undefined, { type: 'customer', accountId: customer.accountId, customerId: customer.customerId });
    } catch (error) {
      // The serial is the buyer's (checked above), so "not found" means the request's productAppId is another product's.
      if (error instanceof AppError && error.code === LicensingErrors.LICENSE_NOT_FOUND) {
        throw new AppError(PortalErrors.MACHINE_REQUEST_MISMATCH, 'The machine request names another product than this license');
      }
      throw error;
    }
    const { activation, token, tokenExpiresAt, nonce } = result.body;
    const license = {
      format: LICENSE_FILE_FORMAT,
      productAppId: request.productAppId,
      serial: serial.code,
      machineId: activation.machineId,
      activationId: activation.id,
      token,
      expiresAt: tokenExpiresAt,
      nonce,
      issuedAt: new Date().toISOString(),
    };
    return {
      created: result.created,
      body: {
        license: `${JSON.stringify(license, null, 2)}\n`,
        filename: `${serial.code.replace(/[^A-Za-z0-9-]/g, '')}-${activation.id}.patchbay-license`,
        activation: { id: activation.id, machine_name: activation.machineName, first_seen_at: activation.activatedAt },
        expiresAt: tokenExpiresAt,
      },
    };
  }
}
