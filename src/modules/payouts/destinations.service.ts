import type { RecipientScope } from '../../platform/auth/scope.js';
import type { Db } from '../../platform/db/database.js';
import { inTransaction, type Tx } from '../../platform/db/transaction.js';
import { AppError, CommonErrors, notFound } from '../../platform/http/errors.js';
import { enqueueEmail } from '../../platform/mail/mail.js';
import { PartnerErrors } from '../partners/index.js';
import { DESTINATION_CHANGED_EMAIL } from './destinations.emails.js';
import * as repo from './destinations.repo.js';
import { PayoutErrors } from './payouts.errors.js';
import type { OnboardingStart, PayoutProvider, PayoutProviders, ProviderKind } from './providers.js';
import type { SandboxCardProvider } from './sandbox-provider.js';

/** How long transfers wait after a destination change (PAYOUT_DESTINATION_HOLD_HOURS). */
export const DEFAULT_DESTINATION_HOLD_HOURS = 72;

export interface CardDestinationAnswer {
  provider: 'card';
  livemode: boolean;
  ready: boolean;
  /** The hosted-onboarding link while onboarding is unfinished (single use; open it privately). */
  url: string | null;
  status: repo.DestinationStatus;
  display: string;
  hold_until: string | null;
  available_at: string | null;
}

export interface WalletDestinationAnswer {
  provider: 'wallet';
  livemode: boolean;
  ready: boolean;
  /** The masked verified e-mail address the wallet pays to. */
  destination: string;
  status: repo.DestinationStatus;
  hold_until: string | null;
  available_at: string | null;
}

/** What the service needs from the partner portal: the recipient's agreements, with their accepted terms. */
export interface RecipientAgreements {
  list(recipient: RecipientScope): Promise<Array<{ kind: string; terms_version: number | null }>>;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const later = (a: Date | null, b: Date) => (a && a.getTime() > b.getTime() ? a : b);

function cardAnswer(d: repo.DestinationRecord, url: string | null): CardDestinationAnswer {
  const ready = d.status === 'ready';
  return { provider: 'card', livemode: d.livemode, ready, url: ready ? null : url, status: d.status, display: d.display, hold_until: iso(d.hold_until), available_at: iso(d.available_at) };
}

function walletAnswer(d: repo.DestinationRecord): WalletDestinationAnswer {
  return { provider: 'wallet', livemode: d.livemode, ready: d.status === 'ready', destination: d.display, status: d.status, hold_until: iso(d.hold_until), available_at: iso(d.available_at) };
}

/**
 * Where a recipient's payouts go. One current destination per recipient and mode; a new one
 * replaces the previous one. The first destination is usable as soon as its provider says so; a
 * change after a destination was ever ready carries a security hold (`hold_until`) and an e-mail
 * notice to the recipient, and `available_at` (what transfers wait for) is never before the hold
 * ends. Onboarding moves no money: payouts are the transfers module's.
 */
export class PayoutDestinations {
  constructor(
    private readonly db: Db,
    private readonly providers: PayoutProviders,
    private readonly sandbox: SandboxCardProvider,
    private readonly agreements: RecipientAgreements,
    private readonly options: { holdHours: number },
  ) {}

  /** Starts (or continues) card onboarding; a ready card answers `ready: true` and changes nothing. */
  async card(recipient: RecipientScope, input: { livemode: boolean; program?: repo.DestinationProgram | undefined }): Promise<CardDestinationAnswer> {
    const provider = this.provider('card', input.livemode);
    await this.admit(recipient, input.program ?? null);
    return inTransaction(this.db, async (tx) => {
      const me = await this.lock(tx, recipient);
      const current = await repo.currentDestination(tx, me.id, input.livemode);
      const continuing = current?.provider === 'card' ? current : undefined;
      if (continuing?.status === 'ready') return cardAnswer(continuing, null);
      const start = await provider.startOnboarding(tx, { recipientId: me.id, email: me.email, existingAccountRef: continuing?.account_ref ?? null });
      if (continuing && start.accountRef === continuing.account_ref) {
        if (start.ready) return cardAnswer(await this.ready(tx, continuing, start.availableAt ?? new Date(), 'provider'), null);
        await repo.recordDestinationEvent(tx, { recipientId: me.id, destinationId: continuing.id, action: 'onboarding_link_issued' });
        return cardAnswer(continuing, start.url);
      }
      return cardAnswer(await this.replace(tx, me, current, { provider: 'card', livemode: input.livemode, program: input.program ?? null, start }), start.url);
    });
  }

  /** The current card destination's readiness, asked of its provider; an unfinished one gets a new link. */
  async refreshCard(recipient: RecipientScope, input: { livemode: boolean }): Promise<CardDestinationAnswer> {
    const provider = this.provider('card', input.livemode);
    await this.admit(recipient, null);
    return inTransaction(this.db, async (tx) => {
      const me = await this.lock(tx, recipient);
      const current = await repo.currentDestination(tx, me.id, input.livemode);
      if (current?.provider !== 'card') throw notFound('Card payout destination');
      if (current.status === 'ready') return cardAnswer(current, null);
      const state = await provider.refresh(tx, current.account_ref);
      if (state.ready) return cardAnswer(await this.ready(tx, current, new Date(), 'provider'), null);
      return cardAnswer(current, state.url);
    });
  }

  /**
   * The wallet pays to the recipient's own verified address and nothing else: the address comes
   * from the recipient record, never from the request. Registering the same address again changes nothing.
   */
  async wallet(recipient: RecipientScope, input: { livemode: boolean }): Promise<WalletDestinationAnswer> {
    const provider = this.provider('wallet', input.livemode);
    await this.admit(recipient, null);
    return inTransaction(this.db, async (tx) => {
      const me = await this.lock(tx, recipient);
      if (!me.email_verified_at) throw new AppError(PartnerErrors.EMAIL_NOT_VERIFIED, 'The wallet pays to your verified e-mail address; sign in through a link to verify it');
      const current = await repo.currentDestination(tx, me.id, input.livemode);
      const sameWallet = current?.provider === 'wallet' ? current : undefined;
      const start = await provider.startOnboarding(tx, { recipientId: me.id, email: me.email, existingAccountRef: sameWallet?.account_ref ?? null });
      if (sameWallet && start.accountRef === sameWallet.account_ref) {
        if (sameWallet.status === 'ready' || !start.ready) return walletAnswer(sameWallet);
        return walletAnswer(await this.ready(tx, sameWallet, start.availableAt ?? new Date(), 'provider'));
      }
      return walletAnswer(await this.replace(tx, me, current, { provider: 'wallet', livemode: input.livemode, program: null, start }));
    });
  }

  /** The sandbox onboarding page: what an unused, unexpired link onboards (404 otherwise). */
  async sandboxOnboarding(token: string): Promise<{ display: string }> {
    const pending = await this.sandbox.pending(this.db, token);
    if (!pending) throw unknownLink();
    return { display: pending.display };
  }

  /** Completes sandbox onboarding, once per link: the sandbox account is onboarded and its destination ready. */
  async completeSandboxOnboarding(token: string): Promise<{ display: string; current: boolean }> {
    return inTransaction(this.db, async (tx) => {
      const pending = await this.sandbox.pending(tx, token);
      if (!pending) throw unknownLink();
      // The recipient first, as every destination change locks it, then the provider's account.
      await repo.lockRecipient(tx, pending.recipientId);
      const done = await this.sandbox.complete(tx, token);
      if (!done) throw unknownLink();
      const destination = await repo.currentByAccount(tx, done.recipientId, 'card', done.accountRef);
      if (destination?.status === 'onboarding') await this.ready(tx, destination, done.onboardedAt, 'sandbox_onboarding');
      return { display: pending.display, current: destination !== undefined };
    });
  }

  private provider(kind: ProviderKind, livemode: boolean): PayoutProvider {
    const provider = this.providers.get(kind, livemode);
    if (!provider) {
      throw new AppError(PayoutErrors.PAYOUT_PROVIDER_NOT_CONFIGURED, `No live ${kind} payout provider is configured on this service; use livemode false for the sandbox`);
    }
    return provider;
  }

  /** The portal's conditions: a verified session and accepted terms (of the named program kind) in a workspace with partner features on. */
  private async admit(recipient: RecipientScope, program: repo.DestinationProgram | null): Promise<void> {
    if (!recipient.verified) throw new AppError(PartnerErrors.EMAIL_NOT_VERIFIED, 'Sign in through a link to manage payout destinations');
    const agreements = await this.agreements.list(recipient);
    if (!agreements.some((a) => a.terms_version !== null && (program === null || a.kind === program))) {
      throw new AppError(
        PayoutErrors.PAYOUT_AGREEMENT_REQUIRED,
        program ? `You have no accepted ${program} agreement` : 'Accept a partner agreement before adding a payout destination',
      );
    }
  }

  private async lock(tx: Tx, recipient: RecipientScope) {
    const me = await repo.lockRecipient(tx, recipient.recipientId);
    if (!me?.active) throw new AppError(CommonErrors.UNAUTHENTICATED, 'A partner portal session is required');
    return me;
  }

  private async ready(tx: Tx, d: repo.DestinationRecord, providerAvailableAt: Date, via: string): Promise<repo.DestinationRecord> {
    const updated = await repo.markReady(tx, d.id, later(d.hold_until, providerAvailableAt));
    await repo.recordDestinationEvent(tx, { recipientId: d.recipient_id, destinationId: d.id, action: 'ready', data: { via, available_at: iso(updated.available_at) } });
    return updated;
  }

  /** A new destination replaces the current one; after a destination was ever ready that is a change: held and announced. */
  private async replace(
    tx: Tx,
    me: { id: number; email: string },
    current: repo.DestinationRecord | undefined,
    next: { provider: ProviderKind; livemode: boolean; program: repo.DestinationProgram | null; start: OnboardingStart },
  ): Promise<repo.DestinationRecord> {
    const now = new Date();
    const change = await repo.hadReadyDestination(tx, me.id, next.livemode);
    const holdUntil = change && this.options.holdHours > 0 ? new Date(now.getTime() + this.options.holdHours * 3_600_000) : null;
    if (current) {
      await repo.markReplaced(tx, current.id);
      await repo.recordDestinationEvent(tx, { recipientId: me.id, destinationId: current.id, action: 'replaced', data: { by_provider: next.provider } });
    }
    const destination = await repo.insertDestination(tx, {
      recipientId: me.id,
      provider: next.provider,
      livemode: next.livemode,
      status: next.start.ready ? 'ready' : 'onboarding',
      accountRef: next.start.accountRef,
      display: next.start.display,
      program: next.program,
      holdUntil,
      availableAt: next.start.ready ? later(holdUntil, next.start.availableAt ?? now) : null,
    });
    await repo.recordDestinationEvent(tx, {
      recipientId: me.id,
      destinationId: destination.id,
      action: 'created',
      data: { provider: next.provider, livemode: next.livemode, status: destination.status, display: destination.display, change, hold_until: iso(holdUntil) },
    });
    if (change) {
      await enqueueEmail(tx, null, DESTINATION_CHANGED_EMAIL, { destinationId: destination.id });
    }
    return destination;
  }
}

const unknownLink = () => new AppError(CommonErrors.NOT_FOUND, 'This onboarding link is unknown, used or expired; start again from the partner portal');
