import { type Static, Type } from '@sinclair/typebox';
import { Id as RecordId, INT32_MAX } from '../../platform/http/bounded.js';
import { MAX_MINOR_UNITS } from '../../platform/money/money.js';
import { SIGNATURE_HEADER } from './checkout.signature.js';

// Schemas of the checkout webhook: the signed event envelope the route validates, and each known
// event type's `data`, which the service checks once it knows the type.

const Id = RecordId();
/** orders.total_cents is an integer column: one order stays below 2^31 minor units. */
const Cents = Type.Integer({ minimum: 0, maximum: Math.min(MAX_MINOR_UNITS, INT32_MAX) });

/** `t` and up to eight `v1` signatures take 558 characters. */
export const SignatureHeaders = { type: 'object', properties: { [SIGNATURE_HEADER]: { type: 'string', maxLength: 1024 } } } as const;

export const CheckoutEventBody = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'Names one event: the same event again answers `replayed` and changes nothing; another body under a used id is 409 `CHECKOUT_EVENT_ID_REUSED`' }),
  type: Type.String({ minLength: 1, maxLength: 100, description: '`sale.captured`, `refund.created`; other types are acknowledged and ignored' }),
  created: Type.Integer({ minimum: 0, maximum: 253402300799, format: 'int64', description: 'Unix seconds when the event happened (the sale or refund time); from 30 days before to 5 minutes after the signature time `t`' }),
  data: Type.Object({}, { additionalProperties: true }),
});
export type CheckoutEventBody = Static<typeof CheckoutEventBody>;

export const SaleCapturedData = Type.Object({
  workspace_id: Id,
  order_id: Type.String({ minLength: 1, maxLength: 200 }),
  currency: Type.String({ pattern: '^[A-Za-z]{3}$', description: 'A current ISO 4217 code, any case; every product of the sale must be priced in it' }),
  customer: Type.Object({ email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', maxLength: 254 }), name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])) }),
  items: Type.Array(Type.Object({ product_id: Id, subtotal_cents: Cents, discount_cents: Cents }), { minItems: 1, maxItems: 100 }),
  referral: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
});
export type SaleCapturedData = Static<typeof SaleCapturedData>;

export const RefundCreatedData = Type.Object({
  workspace_id: Id,
  order_id: Type.String({ minLength: 1, maxLength: 200 }),
  product_id: Id,
  amount_cents: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
});
export type RefundCreatedData = Static<typeof RefundCreatedData>;

export const CheckoutEventAnswer = Type.Object({
  received: Type.Literal(true),
  id: Type.String(),
  outcome: Type.Union([Type.Literal('recorded'), Type.Literal('replayed'), Type.Literal('ignored')]),
  order_item_ids: Type.Optional(Type.Array(Type.Integer())),
});
export type CheckoutEventAnswer = Static<typeof CheckoutEventAnswer>;
