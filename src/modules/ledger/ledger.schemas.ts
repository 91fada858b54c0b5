import { Type } from '@sinclair/typebox';
import { Currency, Id as RecordId, INT32_MAX, Int as BoundedInt } from '../../platform/http/bounded.js';

const Id = RecordId();
const Cents = BoundedInt(0, INT32_MAX, { description: 'minor units' });
const Int = Type.Integer();
const Nullable = <T extends import('@sinclair/typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Party = Type.Union(['platform', 'processing', 'developer', 'affiliate', 'collaborator'].map((p) => Type.Literal(p)));

export const PreviewBody = Type.Object({
  product_id: Id,
  subtotal_cents: Cents,
  discount_cents: Cents,
  platform_fee_cents: Type.Optional(Cents),
  processing_fee_cents: Type.Optional(Cents),
  affiliate_agreement_id: Type.Optional(Id),
  currency: Currency({ description: 'three letters' }),
  collection_provider: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: '`managed` (default): Patchbay’s checkout, fees computed here. Anything else (a reseller, an external store, a historical basis): fees taken as given, partner shares are unfunded estimates.' })),
  cumulative_refund_product_cents: Type.Optional(Cents),
});

const PreviewPart = Type.Object({
  party: Party,
  agreement_id: Nullable(Int),
  rate_bps: Nullable(Int),
  amount_cents: Int,
  funded: Type.Boolean(),
  reversed_cents: Int,
  net_cents: Int,
  status: Type.Optional(Type.String()),
  live: Type.Optional(Type.Boolean()),
});

export const PreviewAnswer = Type.Object({
  mode: Type.Literal('preview'),
  payable: Type.Literal(false),
  currency: Type.String(),
  collection_provider: Type.String(),
  basis: Type.Union([Type.Literal('managed'), Type.Literal('external')]),
  allocation: Type.Object({
    proceeds_cents: Int,
    platform_fee_cents: Int,
    processing_fee_cents: Int,
    distributable_cents: Int,
    parts: Type.Array(PreviewPart),
    funded_partner_cents: Int,
    unfunded_estimate_cents: Int,
    rounding: Type.String(),
  }),
  refund: Nullable(Type.Object({ cumulative_refund_product_cents: Int, reversed: Type.Array(Type.Object({ party: Party, agreement_id: Nullable(Int), amount_cents: Int })) })),
  payoutPlan: Type.Array(Type.Object({ agreement_id: Int, party: Party, amount_cents: Int, funded: Type.Boolean(), when: Type.String() })),
});

const PartnerBalance = Type.Object({
  currency: Type.String(),
  agreement_id: Int,
  party: Type.String(),
  name: Type.String(),
  status: Type.String(),
  allocated_cents: Int,
  reversed_cents: Int,
  pending_cents: Int,
  payable_cents: Int,
  in_transfer_cents: Int,
  paid_cents: Int,
  recovery_outstanding_cents: Int,
  workspace_name: Type.Optional(Type.String()),
});
const OwnBalance = Type.Object({
  currency: Type.String(),
  agreement_id: Type.Null(),
  party: Type.String(),
  name: Type.String(),
  allocated_cents: Int,
  reversed_cents: Int,
  balance_cents: Int,
});
const Unfunded = Type.Object({ currency: Type.String(), agreement_id: Int, name: Type.String(), estimated_cents: Int, funded: Type.Literal(false), payable: Type.Literal(false) });
const Destination = Type.Object({
  recipient_id: Int,
  provider: Type.String(),
  livemode: Type.Boolean(),
  status: Type.String(),
  ready: Type.Boolean(),
  display: Type.String({ description: 'masked' }),
  hold_until: Nullable(Type.String({ format: 'date-time' })),
  available_at: Nullable(Type.String({ format: 'date-time' })),
  transfers_allowed: Type.Boolean(),
  agreement_ids: Type.Optional(Type.Array(Int)),
});
/** A partner transfer with its state (accounting, payout runs). */
export const Transfer = Type.Object({
  id: Int,
  agreement_id: Int,
  provider: Type.String(),
  livemode: Type.Boolean(),
  currency: Type.String(),
  amount_cents: Int,
  status: Type.Union(['reserved', 'submitted', 'paid', 'failed', 'reconciliation_required'].map((s) => Type.Literal(s))),
  failure_reason: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  submitted_at: Nullable(Type.String({ format: 'date-time' })),
  settled_at: Nullable(Type.String({ format: 'date-time' })),
});
const Allocation = Type.Object({
  id: Int,
  order_item_id: Int,
  product_id: Int,
  currency: Type.String(),
  basis: Type.String(),
  funded: Type.Boolean(),
  proceeds_cents: Int,
  platform_fee_cents: Int,
  processing_fee_cents: Int,
  refunded_cents: Int,
  referral_agreement_id: Nullable(Int),
  created_at: Type.String({ format: 'date-time' }),
  parts: Type.Array(Type.Object({ party: Type.String(), agreement_id: Nullable(Int), rate_bps: Nullable(Int), amount_cents: Int, reversed_cents: Int })),
});
const Page = <T extends import('@sinclair/typebox').TSchema>(row: T) => Type.Object({ rows: Type.Array(row), total: Int, page: Int, pageSize: Int });

/** Unknown parameters are refused (400), as on every other route. */
export const AccountingQuery = Type.Object(
  {
    page: Type.Optional(BoundedInt(1, 100000, { default: 1 })),
    pageSize: Type.Optional(BoundedInt(1, 200, { default: 50 })),
  },
  { additionalProperties: false },
);

export const DeveloperAccounting = Type.Object({
  currencies: Type.Array(Type.String()),
  balance_details: Type.Array(Type.Union([OwnBalance, PartnerBalance])),
  funded: Type.Array(
    Type.Object({
      currency: Type.String(),
      collected_cents: Int,
      platform_share_cents: Int,
      developer_earnings_cents: Int,
      partner_pending_cents: Int,
      partner_payable_cents: Int,
      partner_recovery_outstanding_cents: Int,
      in_transfer_cents: Int,
      paid_out_cents: Int,
    }),
  ),
  external: Type.Array(Type.Object({ currency: Type.String(), estimated_partner_cents: Int, funded: Type.Literal(false) })),
  unfunded_earnings: Type.Array(Unfunded),
  allocations: Page(Allocation),
  reversals: Page(Allocation),
  destinations: Type.Array(Destination),
  transfers: Type.Array(Transfer),
});

export const RecipientAccounting = Type.Object({
  programs: Type.Array(Type.Object({ agreement_id: Int, kind: Type.String(), name: Type.String(), status: Type.String(), workspace_name: Type.String() })),
  balance_details: Type.Array(PartnerBalance),
  unfunded_earnings: Type.Array(Unfunded),
  destinations: Type.Array(Destination),
  transfers: Type.Array(Transfer),
});

/** The recipient's allocation rows: paging as the developer's accounting, an agreement of theirs, reversals only. */
export const RecipientEntriesQuery = Type.Object(
  {
    page: Type.Optional(BoundedInt(1, 100000, { default: 1 })),
    pageSize: Type.Optional(BoundedInt(1, 200, { default: 50 })),
    agreement_id: Type.Optional(RecordId({ description: 'Only this agreement of the signed-in partner (another’s answers 404)' })),
    reversals: Type.Optional(Type.Boolean({ description: '`true`: only rows a refund reversed (part of) — the reversals' })),
    currency: Type.Optional(Currency({ description: 'Only sales in this currency (three letters, either case)' })),
  },
  { additionalProperties: false },
);

const RecipientEntry = Type.Object({
  allocation_id: Int,
  agreement_id: Int,
  workspace_name: Type.String(),
  program_name: Type.String(),
  party: Type.String({ description: '`affiliate` or `collaborator`: the partner’s role in the sale' }),
  product_name: Type.String(),
  currency: Type.String(),
  basis: Type.String({ description: '`managed` (Patchbay’s checkout: funded) or the external basis (an unfunded estimate, never payable)' }),
  funded: Type.Boolean(),
  proceeds_cents: Int,
  refunded_cents: Int,
  rate_bps: Nullable(Int),
  amount_cents: Type.Integer({ description: 'The partner’s share of the sale' }),
  reversed_cents: Type.Integer({ description: 'Of that share, what refunds took back' }),
  net_cents: Int,
  created_at: Type.String({ format: 'date-time' }),
});
export const RecipientEntries = Page(RecipientEntry);
