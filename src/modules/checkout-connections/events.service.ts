import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import stableStringify from 'safe-stable-stringify';
import { operatorScope, type Scope } from '../../platform/auth/scope.js';
import { seal, unseal } from '../../platform/crypto/sealed.js';
import type { Db } from '../../platform/db/database.js';
import type { CheckoutProvider } from '../../platform/db/schema.js';
import { inTransaction } from '../../platform/db/transaction.js';
import { AppError, notFound } from '../../platform/http/errors.js';
import { invalidUtf8 } from '../../platform/http/json-body.js';
import type { ReferralVerifier } from '../checkout/index.js';
import { ConnectionErrors } from './checkout-connections.errors.js';
import * as repo from './checkout-connections.repo.js';
import type { EventAnswer } from './checkout-connections.schemas.js';
import { bookAction, BookingFailed, type BookedEvent } from './event-booking.js';
import { PayloadUnreadable, SignatureRejected } from './payload.js';
import type { EventAction, VerifiedEvent } from './provider-events.js';
import { interpretLemonSqueezy, readLemonSqueezyEvent, verifyLemonSqueezy } from './provider.lemonsqueezy.js';
import { interpretPaddle, readPaddleEvent, verifyPaddle } from './provider.paddle.js';
import { interpretStripe, readStripeEvent, type StripeApiOptions, verifyStripe } from './provider.stripe.js';

/** What a connection's secrets are sealed under: a ciphertext copied to another connection does not open. */
export const secretContext = (connectionId: number, what: 'signing-secret' | 'api-key') => `checkout-connection:${connectionId}:${what}`;
const payloadContext = (connectionId: number, providerEventId: string) => `checkout-connection-event:${connectionId}:${providerEventId}`;

type Headers = Record<string, string | string[] | undefined>;

export interface ConnectionEventsDeps {
  encryptionKey: Buffer;
  verifyReferral: ReferralVerifier;
  log: FastifyBaseLogger;
  stripeApi?: StripeApiOptions | undefined;
}

/** How an event ended up: the row of the log, and whether this delivery was a replay of an event already booked. */
type Applied = { row: repo.EventRecord; replay: boolean };

/**
 * Events from the providers' webhooks. Verified with the connection's secret by the provider's
 * own library, then kept in the connection's event log by the provider's event id: a replay
 * changes nothing, another body under a used id is refused, and an event that cannot be booked is
 * logged as failed with the reason (its body sealed until it is re-processed) and booked nothing.
 */
export class ConnectionEvents {
  constructor(
    private readonly db: Db,
    private readonly deps: ConnectionEventsDeps,
  ) {}

  async receive(provider: CheckoutProvider, connectionId: number, raw: Buffer, headers: Headers): Promise<EventAnswer> {
    const connection = await repo.connectionForWebhook(this.db, connectionId);
    if (!connection || connection.provider !== provider) throw notFound('Checkout connection');
    if (!isUtf8(raw)) throw invalidUtf8(raw);
    const secret = unseal(this.deps.encryptionKey, connection.signing_secret_sealed, secretContext(connection.id, 'signing-secret')).toString('utf8');
    const event = await this.verify(provider, raw, headers, secret);
    if (!connection.enabled) throw new AppError(ConnectionErrors.CHECKOUT_CONNECTION_DISABLED, `Checkout connection ${connection.id} is disabled; nothing was recorded`);
    const digest = createHash('sha256').update(stableStringify(event.body) ?? '').digest();
    const known = await repo.findEvent(this.db, connection.id, event.id);
    if (known) {
      this.checkDigest(known, digest);
      // Answered before anything is interpreted: a booked event never reaches the provider's API again.
      if (known.outcome !== 'failed') return answer({ row: known, replay: true });
    }
    const applied = await this.apply(connection, event, digest, raw);
    return answer(applied);
  }

  /** Books a failed event again (the mapping or the key fixed since): the same path as a delivery. */
  async reprocess(scope: Scope, connectionId: number, eventId: number): Promise<repo.EventRecord> {
    const connection = await repo.findConnection(this.db, scope, connectionId);
    if (!connection) throw notFound('Checkout connection');
    const row = await repo.findEventOf(this.db, scope, connectionId, eventId);
    if (!row) throw notFound('Event');
    if (row.outcome !== 'failed' || !row.payload_sealed) {
      throw new AppError(ConnectionErrors.CHECKOUT_CONNECTION_EVENT_NOT_FAILED, `Event ${eventId} is ${row.outcome}; only failed events are re-processed`);
    }
    const raw = unseal(this.deps.encryptionKey, row.payload_sealed, payloadContext(connection.id, row.provider_event_id));
    const event = readStored(connection.provider, JSON.parse(raw.toString('utf8')));
    return (await this.apply(connection, event, Buffer.from(row.body_digest), raw)).row;
  }

  /** The job's work after a Paddle customer arrived: each waiting sale that is still failed. */
  async reprocessWaiting(workspaceId: number, connectionId: number, eventIds: number[]): Promise<number> {
    let booked = 0;
    for (const id of eventIds) {
      try {
        const row = await this.reprocess(operatorScope(workspaceId, 0), connectionId, id);
        if (row.outcome !== 'failed') booked += 1;
      } catch (error) {
        // Re-processed by a person or a delivery meanwhile, or the connection was removed: nothing left to do.
        if (!(error instanceof AppError && (error.status === 404 || error.code === ConnectionErrors.CHECKOUT_CONNECTION_EVENT_NOT_FAILED))) throw error;
      }
    }
    return booked;
  }

  private async verify(provider: CheckoutProvider, raw: Buffer, headers: Headers, secret: string): Promise<VerifiedEvent> {
    try {
      if (provider === 'stripe') return await verifyStripe(raw, headers, secret);
      if (provider === 'paddle') return await verifyPaddle(raw, headers, secret);
      return verifyLemonSqueezy(raw, headers, secret);
    } catch (error) {
      if (error instanceof SignatureRejected) {
        this.deps.log.warn({ provider }, 'checkout connection event refused: bad signature');
        throw new AppError(ConnectionErrors.CHECKOUT_CONNECTION_SIGNATURE_INVALID, `Signature check failed: ${error.message}`);
      }
      if (error instanceof PayloadUnreadable || error instanceof SyntaxError) {
        throw new AppError(ConnectionErrors.CHECKOUT_CONNECTION_EVENT_UNREADABLE, `The signed body is not a ${provider} event: ${error.message}`);
      }
      throw error;
    }
  }

  private checkDigest(row: repo.EventRecord, digest: Buffer): void {
    // bytea arrives as a Buffer from pg and as a Uint8Array from the embedded database.
    if (digest.equals(Buffer.from(row.body_digest))) return;
    throw new AppError(ConnectionErrors.CHECKOUT_CONNECTION_EVENT_ID_REUSED, `Event ${row.provider_event_id} was already received with a different body; an event id names one event`);
  }

  private async interpret(connection: repo.ConnectionRecord, event: VerifiedEvent): Promise<EventAction> {
    try {
      if (connection.provider === 'paddle') return interpretPaddle(event);
      if (connection.provider === 'lemonsqueezy') return interpretLemonSqueezy(event);
      const apiKey = connection.api_key_sealed ? unseal(this.deps.encryptionKey, connection.api_key_sealed, secretContext(connection.id, 'api-key')).toString('utf8') : null;
      return await interpretStripe(event, { apiKey, api: this.deps.stripeApi ?? {} });
    } catch (error) {
      if (error instanceof PayloadUnreadable) return { kind: 'fail', reason: error.message };
      throw error;
    }
  }

  /**
   * Books an event in one transaction with its log row; when it cannot be booked, that transaction
   * rolls back and a second one logs the failure, so a failed event leaves nothing half-written.
   */
  private async apply(connection: repo.ConnectionRecord, event: VerifiedEvent, digest: Buffer, raw: Buffer): Promise<Applied> {
    const scope = operatorScope(connection.workspace_id, 0);
    const action = await this.interpret(connection, event);
    try {
      return await inTransaction(this.db, async (tx): Promise<Applied> => {
        let id = await repo.claimEvent(tx, { workspaceId: connection.workspace_id, connectionId: connection.id, providerEventId: event.id, type: event.type, digest });
        const retry = id === undefined;
        if (id === undefined) {
          const taken = await repo.findEvent(tx, connection.id, event.id);
          const row = taken && (await repo.lockEvent(tx, connection.id, taken.id));
          if (!row) throw new Error(`the event ${event.id} was taken and is gone`);
          this.checkDigest(row, digest);
          if (row.outcome !== 'failed') return { row, replay: true };
          id = row.id;
        }
        const booked: BookedEvent = await bookAction(tx, scope, connection, action, this.deps);
        const row = await repo.finishEvent(tx, id, { ...booked, payloadSealed: null, waitingFor: null }, retry);
        return { row, replay: false };
      });
    } catch (error) {
      const failure = failureOf(error);
      if (!failure) throw error;
      this.deps.log.info({ connectionId: connection.id, eventId: event.id, type: event.type, reason: failure.reason }, 'checkout connection event failed');
      return this.recordFailure(connection, event, digest, raw, failure);
    }
  }

  private recordFailure(connection: repo.ConnectionRecord, event: VerifiedEvent, digest: Buffer, raw: Buffer, failure: { reason: string; waitingFor: string | null }): Promise<Applied> {
    // Customer data is in the body: it stays sealed, and only while the event may be re-processed.
    const payloadSealed = seal(this.deps.encryptionKey, raw, payloadContext(connection.id, event.id));
    return inTransaction(this.db, async (tx): Promise<Applied> => {
      const fresh = await repo.insertFailedEvent(tx, { workspaceId: connection.workspace_id, connectionId: connection.id, providerEventId: event.id, type: event.type, digest, payloadSealed, ...failure });
      if (fresh) return { row: fresh, replay: false };
      const taken = await repo.findEvent(tx, connection.id, event.id);
      const row = taken && (await repo.lockEvent(tx, connection.id, taken.id));
      if (!row) throw new Error(`the event ${event.id} was taken and is gone`);
      if (row.outcome !== 'failed') return { row, replay: true };
      return { row: await repo.finishEvent(tx, row.id, { outcome: 'failed', reason: failure.reason, orderItemIds: [], payloadSealed, waitingFor: failure.waitingFor }, true), replay: false };
    });
  }
}

/** Why booking failed, for the event log; null for errors that are not the event's (the database, a conflict to retry). */
function failureOf(error: unknown): { reason: string; waitingFor: string | null } | null {
  if (error instanceof BookingFailed) return { reason: error.message, waitingFor: error.waitingFor };
  if (error instanceof PayloadUnreadable) return { reason: error.message, waitingFor: null };
  // The booking path's own refusals (a product not of this workspace, a refund beyond the payment).
  if (error instanceof AppError && error.status >= 400 && error.status < 500 && error.status !== 409) return { reason: error.detail ?? error.code, waitingFor: null };
  return null;
}

function readStored(provider: CheckoutProvider, body: unknown): VerifiedEvent {
  if (provider === 'stripe') return readStripeEvent(body);
  if (provider === 'paddle') return readPaddleEvent(body);
  return readLemonSqueezyEvent(body);
}

function answer({ row, replay }: Applied): EventAnswer {
  return {
    received: true,
    id: row.provider_event_id,
    outcome: replay ? 'replayed' : row.outcome,
    reason: replay ? `event ${row.provider_event_id} was received before (${row.outcome})` : row.reason,
    order_item_ids: row.order_item_ids,
  };
}
