/**
 * Which console page uses which API operation (the `operationId`s of docs/openapi.json), so every
 * developer route is reachable from a page. `test/web/console-route-map.test.ts` walks the OpenAPI
 * document against this map and lists any developer operation no page uses, any operation named
 * here that no console code calls, and any page that is not a route. Add a page's operations here
 * with the page.
 */
export const CONSOLE_ROUTE_MAP: Record<string, readonly string[]> = {
  // Signing in, the account and the workspace it acts in
  '/sign-in': ['session.link', 'session.create'],
  '/workspaces': ['session.list'],
  '(every page: the account menu)': ['session.list', 'session.delete'],
  '/outbox': ['outbox.list'],
  // Customers, serials, purchases
  '/customers': ['customers.list', 'customers.export', 'customers.demoCsv', 'customers.import', 'customers.remove', 'imports.get'],
  '/serials': [
    'serials.list',
    'serials.export',
    'serials.demoCsv',
    'serials.import',
    'serials.generate',
    'serials.resellers',
    'serials.availableByProduct',
    'imports.get',
  ],
  '/serials/:serialId': [
    'serials.activate',
    'serials.reactivate',
    'serials.deactivate',
    'serials.suspend',
    'serials.unsuspend',
    'serials.revoke',
    'serials.customerPortalOrder.hide',
    'serials.customerPortalOrder.show',
    'serials.events.list',
    'serials.activations.list',
    'serials.activations.release',
  ],
  '/purchases': ['purchases.list', 'purchases.export', 'purchases.demoCsv', 'purchases.filterOptions', 'purchases.import', 'purchases.manualGrant', 'imports.get'],
  // Products
  '/products': ['products.list', 'products.create'],
  '/products/:productId': ['products.get', 'products.dashboard'],
  '/products/:productId/files': ['products.files.list', 'products.files.create', 'products.files.delete', 'products.files.link'],
  '/products/:productId/versions': ['products.versions.list', 'products.versions.create', 'products.versions.update'],
  '/products/:productId/reviews': ['products.reviews.list', 'products.reviews.import', 'products.reviews.setStatus'],
  '/products/:productId/credentials': ['products.pluginPackage.status', 'products.restConfig'],
  '/products/:productId/packages': ['products.pluginPackage.status', 'products.pluginPackage.download', 'products.pluginPackage.generate', 'products.pluginPackage.regenerate'],
  '/products/:productId/settings': ['products.update'],
  '/storefront-package': ['storefront.pluginPackage.download'],
  // Partners and money
  '/partners/programs': ['partners.programs.list'],
  '/partners/programs/new': ['partners.programs.create'],
  '/partners/programs/:id': ['partners.programs.update', 'partners.programs.setStatus', 'partners.programs.invite', 'partners.programs.liveConsent'],
  '/partners/preview': ['partners.programs.preview'],
  '/money/accounting': ['partners.programs.accounting'],
  '/money/payouts': ['partners.payouts.runs'],
  '/money/payouts/runs/:runId': ['partners.payouts.runs.get'],
  // Integrations
  '/checkout-connections': ['checkoutConnections.list', 'checkoutConnections.create'],
  '/checkout-connections/:connectionId': [
    'checkoutConnections.get',
    'checkoutConnections.update',
    'checkoutConnections.delete',
    'checkoutConnections.events',
    'checkoutConnections.events.reprocess',
  ],
  '/webhooks': ['webhooks.endpoints.list', 'webhooks.endpoints.create', 'webhooks.eventTypes.list'],
  '/webhooks/:endpointId': [
    'webhooks.endpoints.get',
    'webhooks.endpoints.update',
    'webhooks.endpoints.delete',
    'webhooks.endpoints.rotateSecret',
    'webhooks.endpoints.sendTest',
    'webhooks.deliveries.list',
    'webhooks.deliveries.redeliver',
    'webhooks.deliveries.redeliverFailed',
  ],
  // Team and settings
  '/team': ['members.list', 'members.create', 'members.update', 'members.delete'],
  '/api-tokens': ['apiTokens.list', 'apiTokens.create', 'apiTokens.delete'],
  '/settings': ['workspace.list', 'workspace.update', 'customerPortal.settings.get', 'customerPortal.settings.update'],
};

/**
 * Developer operations no console page uses yet, each with the reason: the one place a gap is
 * written down. A key is an `operationId`, or a path prefix (starting with `/`) for a whole area.
 * The test fails when an operation is in neither the map nor here, and when a gap has its page now
 * (every operation under it is in the map).
 */
export const CONSOLE_GAPS: Record<string, string> = {};
