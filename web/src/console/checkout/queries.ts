import type { paths } from '../../api/client';

export type CheckoutConnection = paths['/api/developer/checkout-connections']['get']['responses'][200]['content']['application/json']['rows'][number];
export type Provider = CheckoutConnection['provider'];
export type MappingEntry = CheckoutConnection['productMapping'][number];
export type CheckoutEvent =
  paths['/api/developer/checkout-connections/{connectionId}/events']['get']['responses'][200]['content']['application/json']['rows'][number];

export const checkoutKeys = {
  connections: ['console', 'checkout-connections'] as const,
  connection: (id: number) => ['console', 'checkout-connections', id] as const,
  events: (id: number) => ['console', 'checkout-connections', 'events', id] as const,
};

export const PROVIDERS: { value: Provider; label: string; secret: string; productId: string; docs: string }[] = [
  { value: 'stripe', label: 'Stripe', secret: 'The endpoint’s signing secret, whsec_…', productId: 'prod_… (or a price_…)', docs: 'checkout-connections-stripe.md' },
  { value: 'paddle', label: 'Paddle', secret: 'The notification destination’s secret key, pdl_ntfset_…', productId: 'pro_… (or a pri_…)', docs: 'checkout-connections-paddle.md' },
  { value: 'lemonsqueezy', label: 'Lemon Squeezy', secret: 'The signing secret you typed into the webhook', productId: 'the product id, say 123456', docs: 'checkout-connections-lemonsqueezy.md' },
];

export const providerInfo = (provider: Provider) => PROVIDERS.find((p) => p.value === provider)!;
