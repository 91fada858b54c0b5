import type { CheckoutProvider } from '../../platform/db/schema.js';

// What a provider's event means for Patchbay, in one shape for the three providers: each adapter
// (provider.stripe.ts, provider.paddle.ts, provider.lemonsqueezy.ts) reads its provider's payload
// into one of these, and the event service books it the same way whoever sent it.

export const PROVIDERS = ['stripe', 'paddle', 'lemonsqueezy'] as const satisfies readonly CheckoutProvider[];

/** One line of a provider's order, in minor units exactly as the provider reports them. */
export interface SaleLine {
  /** The provider's id for the line (a Paddle transaction item), or the product id when it has none. */
  key: string;
  providerProductId: string | null;
  providerPriceId: string | null;
  /** A Patchbay product the seller named in the order's metadata (Stripe's `metadata.patchbay_product_id`). */
  patchbayProductId: number | null;
  /** What the line is called at the provider, for the event log's reasons. */
  label: string | null;
  quantity: number;
  subtotalCents: number;
  discountCents: number;
  /** What the buyer paid for the line, taxes included: refunds are reported against it. */
  paidCents: number;
}

export interface ProviderSale {
  orderId: string;
  /** Stripe's payment intent: its refunds name it rather than the checkout session. */
  paymentRef: string | null;
  currency: string;
  /** The buyer, or (Paddle) the provider's customer id whose e-mail came in a customer event. */
  customer: { email: string; name: string | null } | { providerCustomerId: string };
  referral: string | null;
  purchasedAt: Date;
  lines: SaleLine[];
}

/**
 * A refund as the provider reports it. Reports are lower bounds of what the order has refunded so
 * far, so the same refund reported twice (Stripe's `charge.refunded` and `refund.created`) or late
 * counts once: the order's refunded total is the larger of the totals reported and the sum of the
 * distinct refunds reported.
 */
export type RefundReport =
  /** The order's refunded total so far (Stripe `charge.refunded`, Lemon Squeezy `order_refunded`). */
  | { kind: 'total'; totalCents: number }
  /** One refund of the order by its id (Stripe `refund.created`). */
  | { kind: 'refund'; refundKey: string; amountCents: number }
  /** One refund naming its items (Paddle's approved refund adjustment); `full` refunds the item whatever the amount. */
  | { kind: 'items'; refundKey: string; items: Array<{ itemKey: string; amountCents: number; full: boolean }> };

export interface ProviderRefund {
  order: { orderId: string } | { paymentRef: string };
  report: RefundReport;
  refundedAt: Date;
}

/** What an event asks Patchbay to do. */
export type EventAction =
  | { kind: 'sale'; sale: ProviderSale }
  | { kind: 'refund'; refund: ProviderRefund }
  /** Paddle: the e-mail and name behind a customer id its sales name. */
  | { kind: 'customer'; customer: { providerCustomerId: string; email: string; name: string | null } }
  | { kind: 'ignore'; reason: string }
  | { kind: 'fail'; reason: string };

/** An event the provider's library verified: its id and type, and its parsed body. */
export interface VerifiedEvent {
  id: string;
  type: string;
  body: unknown;
}
