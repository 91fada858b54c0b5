import { type Static, Type } from '@sinclair/typebox';
import { MAX_MINOR_UNITS } from '../../platform/money/money.js';

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
/** orders.total_cents is an integer column: one order stays below 2^31 minor units. */
const Cents = Type.Integer({ minimum: 0, maximum: Math.min(MAX_MINOR_UNITS, 2147483647) });

export const CheckoutEventBody = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'Unique per event; a replay with the same id changes nothing' }),
  type: Type.String({ minLength: 1, maxLength: 100, description: '`sale.captured`, `refund.created`; other types are acknowledged and ignored' }),
  created: Type.Integer({ minimum: 0, maximum: 253402300799, description: 'Unix seconds when the event happened (the sale time)' }),
  data: Type.Object({}, { additionalProperties: true }),
});
export type CheckoutEventBody = Static<typeof CheckoutEventBody>;

export const SaleCapturedData = Type.Object({
  workspace_id: Id,
  order_id: Type.String({ minLength: 1, maxLength: 200 }),
  currency: Type.String({ pattern: '^[A-Za-z]{3}$' }),
  customer: Type.Object({ email: Type.String({ pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', maxLength: 254 }), name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])) }),
  items: Type.Array(Type.Object({ product_id: Id, subtotal_cents: Cents, discount_cents: Cents }), { minItems: 1, maxItems: 100 }),
  referral: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
});
export type SaleCapturedData = Static<typeof SaleCapturedData>;

export const RefundCreatedData = Type.Object({
  workspace_id: Id,
  order_id: Type.String({ minLength: 1, maxLength: 200 }),
  product_id: Id,
  amount_cents: Type.Integer({ minimum: 1, maximum: 2147483647 }),
});
export type RefundCreatedData = Static<typeof RefundCreatedData>;

export const CheckoutEventAnswer = Type.Object({
  received: Type.Literal(true),
  id: Type.String(),
  outcome: Type.Union([Type.Literal('recorded'), Type.Literal('replayed'), Type.Literal('ignored')]),
  order_item_ids: Type.Optional(Type.Array(Type.Integer())),
});
export type CheckoutEventAnswer = Static<typeof CheckoutEventAnswer>;
