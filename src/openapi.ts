import type { TSchema } from '@sinclair/typebox';
import { CustomerRow, RemoveCustomerResult } from './modules/customers/index.js';
import { ImportResource } from './modules/imports/imports.schemas.js';
import { ActivateResult, DeactivateResult, Jwks, ValidateResult } from './modules/licensing/index.js';
import { FileMetadata, ProductRow, RestApi, ReviewRecord, VersionRecord } from './modules/products/index.js';
import { FilterOptions, ManualGrantResult, PurchaseRow } from './modules/purchases/index.js';
import { ActionResult, ActivationRow, GenerateResult, PortalOrderResult, SerialRow } from './modules/serials/index.js';
import { ImportResult } from './platform/import/import-schemas.js';
import { LinkAnswerSchema } from './platform/links/private-links.js';
import { PortalDownloadRow, PortalLicenseRow, PortalOrderRow, PortalSettings } from './modules/customer-portal/index.js';
import type { OpenApiDocument, OpenApiOptions } from './platform/http/openapi.js';
import { ProblemSchema } from './platform/http/schemas.js';
import { WEBHOOK_SIGNATURE_SCHEME, webhooksSection } from './modules/webhooks/index.js';

/**
 * What the OpenAPI document calls things. Generated clients name their types and functions after
 * these, so a name here is part of the API: change one only with a major version.
 */

/** Schemas the routes use inline that the document names (`#/components/schemas/<name>`). */
export const OPENAPI_COMPONENTS: Readonly<Record<string, TSchema>> = {
  Problem: ProblemSchema,
  CustomerRow,
  RemoveCustomerResult,
  ImportResult,
  ImportResource,
  SerialRow,
  SerialGenerateResult: GenerateResult,
  SerialActionResult: ActionResult,
  SerialPortalOrderResult: PortalOrderResult,
  SerialActivationRow: ActivationRow,
  PurchaseRow,
  PurchaseFilterOptions: FilterOptions,
  ManualGrantResult,
  ProductRow,
  FileMetadata,
  RestApi,
  VersionRecord,
  ReviewRecord,
  LicenseActivation: ActivateResult,
  LicenseValidation: ValidateResult,
  LicenseDeactivation: DeactivateResult,
  LicenseKeySet: Jwks,
  PrivateLink: LinkAnswerSchema,
  CustomerPortalOrder: PortalOrderRow,
  CustomerPortalLicense: PortalLicenseRow,
  CustomerPortalDownload: PortalDownloadRow,
  CustomerPortalSettings: PortalSettings,
};

/**
 * The id of every operation, keyed `METHOD /path/{param}`. Routes added later get a derived id
 * (src/platform/http/openapi-operation-ids.ts) until they are pinned here.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /healthz': 'health.live',
  'GET /readyz': 'health.ready',
  'GET /metrics': 'health.metrics',
  'GET /api/private-links/{kind}/{id}': 'privateLinks.download',
  'GET /api/developer/imports/{importId}': 'imports.get',

  'GET /api/developer/customers': 'customers.list',
  'GET /api/developer/customers/export': 'customers.export',
  'GET /api/developer/customers/demo-csv': 'customers.demoCsv',
  'POST /api/developer/customers/import': 'customers.import',
  'DELETE /api/developer/customers/{customerId}': 'customers.remove',

  'GET /api/developer/serials': 'serials.list',
  'GET /api/serials': 'serials.listDeprecated',
  'GET /api/developer/serials/export': 'serials.export',
  'GET /api/developer/serials/demo-csv': 'serials.demoCsv',
  'POST /api/developer/serials/import': 'serials.import',
  'GET /api/developer/serials/available-by-product': 'serials.availableByProduct',
  'GET /api/developer/serials/resellers': 'serials.resellers',
  'POST /api/developer/serials/generate': 'serials.generate',
  'POST /api/developer/serials/{serialId}/activate': 'serials.activate',
  'POST /api/developer/serials/{serialId}/reactivate': 'serials.reactivate',
  'POST /api/developer/serials/{serialId}/deactivate': 'serials.deactivate',
  'POST /api/developer/serials/{serialId}/suspend': 'serials.suspend',
  'POST /api/developer/serials/{serialId}/unsuspend': 'serials.unsuspend',
  'POST /api/developer/serials/{serialId}/revoke': 'serials.revoke',
  'POST /api/developer/serials/{serialId}/customer-portal-order/hide': 'serials.customerPortalOrder.hide',
  'POST /api/developer/serials/{serialId}/customer-portal-order/show': 'serials.customerPortalOrder.show',
  'GET /api/developer/serials/{serialId}/events': 'serials.events.list',
  'GET /api/developer/serials/{serialId}/activations': 'serials.activations.list',
  'DELETE /api/developer/serials/{serialId}/activations/{activationId}': 'serials.activations.release',

  'GET /api/developer/purchases': 'purchases.list',
  'GET /api/developer/purchases/export': 'purchases.export',
  'GET /api/developer/purchases/demo-csv': 'purchases.demoCsv',
  'GET /api/developer/purchases/filter-options': 'purchases.filterOptions',
  'POST /api/developer/purchases/import': 'purchases.import',
  'POST /api/developer/purchases/manual-grant': 'purchases.manualGrant',

  'GET /api/developer/products': 'products.list',
  'POST /api/developer/products': 'products.create',
  'GET /api/developer/products/{productId}': 'products.get',
  'PATCH /api/developer/products/{productId}': 'products.update',
  'GET /api/developer/products/{productId}/dashboard': 'products.dashboard',
  'GET /api/developer/products/{productId}/files': 'products.files.list',
  'POST /api/developer/products/{productId}/files': 'products.files.create',
  'DELETE /api/developer/products/{productId}/files/{fileId}': 'products.files.delete',
  'POST /api/developer/products/{productId}/files/{fileId}/link': 'products.files.link',
  'GET /api/developer/products/{productId}/versions': 'products.versions.list',
  'POST /api/developer/products/{productId}/versions': 'products.versions.create',
  'PATCH /api/developer/products/{productId}/versions/{versionId}': 'products.versions.update',
  'GET /api/developer/products/{productId}/reviews': 'products.reviews.list',
  'POST /api/developer/products/{productId}/reviews/import': 'products.reviews.import',
  'POST /api/developer/products/{productId}/reviews/{reviewId}/status': 'products.reviews.setStatus',
  'GET /api/developer/products/{productId}/rest-config': 'products.restConfig',
  'GET /api/developer/products/{productId}/plugin-package': 'products.pluginPackage.download',
  'GET /api/developer/products/{productId}/plugin-package/status': 'products.pluginPackage.status',
  'POST /api/developer/products/{productId}/plugin-package/generate': 'products.pluginPackage.generate',
  'POST /api/developer/products/{productId}/plugin-package/regenerate': 'products.pluginPackage.regenerate',
  'GET /api/developer/storefront/plugin-package': 'storefront.pluginPackage.download',

  'GET /api/developer/partners/programs': 'partners.programs.list',
  'POST /api/developer/partners/programs': 'partners.programs.create',
  'PATCH /api/developer/partners/programs/{id}': 'partners.programs.update',
  'POST /api/developer/partners/programs/{id}/status': 'partners.programs.setStatus',
  'POST /api/developer/partners/programs/{id}/invite': 'partners.programs.invite',
  'POST /api/developer/partners/programs/{id}/live-consent': 'partners.programs.liveConsent',
  'POST /api/developer/partners/programs/preview': 'partners.programs.preview',
  'GET /api/developer/partners/programs/accounting': 'partners.programs.accounting',

  'POST /api/partner-portal/session/link': 'partnerPortal.session.requestLink',
  'POST /api/partner-portal/session': 'partnerPortal.session.create',
  'DELETE /api/partner-portal/session': 'partnerPortal.session.delete',
  'GET /api/partner-portal/programs': 'partnerPortal.programs.list',
  'GET /api/partner-portal/programs/accounting': 'partnerPortal.programs.accounting',
  'GET /api/partner-portal/programs/invitations/{token}': 'partnerPortal.invitations.get',
  'POST /api/partner-portal/programs/invitations/accept': 'partnerPortal.invitations.accept',
  'POST /api/partner-portal/programs/{id}/live-consent': 'partnerPortal.programs.liveConsent',
  'POST /api/partner-portal/programs/payouts/card-provider': 'partnerPortal.payouts.cardProvider.start',
  'POST /api/partner-portal/programs/payouts/card-provider/refresh': 'partnerPortal.payouts.cardProvider.refresh',
  'POST /api/partner-portal/programs/payouts/wallet-provider': 'partnerPortal.payouts.walletProvider.register',
  'GET /api/payouts/sandbox/onboarding/{token}': 'payouts.sandboxOnboarding.show',
  'POST /api/payouts/sandbox/onboarding/{token}': 'payouts.sandboxOnboarding.complete',
  'GET /api/partner-referrals/{code}': 'referrals.follow',

  'POST /api/customer-portal/session/link': 'customerPortal.session.requestLink',
  'POST /api/customer-portal/session': 'customerPortal.session.create',
  'GET /api/customer-portal/session': 'customerPortal.session.get',
  'DELETE /api/customer-portal/session': 'customerPortal.session.delete',
  'GET /api/customer-portal/orders': 'customerPortal.orders.list',
  'GET /api/customer-portal/orders/{orderId}': 'customerPortal.orders.get',
  'GET /api/customer-portal/licenses': 'customerPortal.licenses.list',
  'DELETE /api/customer-portal/licenses/{serialId}/activations/{activationId}': 'customerPortal.licenses.releaseDevice',
  'POST /api/customer-portal/licenses/{serialId}/offline-activations': 'customerPortal.licenses.activateOffline',
  'POST /api/customer-portal/keys/resend': 'customerPortal.keys.resend',
  'GET /api/customer-portal/downloads': 'customerPortal.downloads.list',
  'POST /api/customer-portal/downloads/{fileId}/link': 'customerPortal.downloads.link',
  'GET /api/developer/customer-portal': 'customerPortal.settings.get',
  'PATCH /api/developer/customer-portal': 'customerPortal.settings.update',
  'POST /api/checkout/events': 'checkout.events.receive',

  'GET /api/developer/webhooks/event-types': 'webhooks.eventTypes.list',
  'GET /api/developer/webhooks/endpoints': 'webhooks.endpoints.list',
  'POST /api/developer/webhooks/endpoints': 'webhooks.endpoints.create',
  'GET /api/developer/webhooks/endpoints/{endpointId}': 'webhooks.endpoints.get',
  'PATCH /api/developer/webhooks/endpoints/{endpointId}': 'webhooks.endpoints.update',
  'DELETE /api/developer/webhooks/endpoints/{endpointId}': 'webhooks.endpoints.delete',
  'POST /api/developer/webhooks/endpoints/{endpointId}/rotate-secret': 'webhooks.endpoints.rotateSecret',
  'POST /api/developer/webhooks/endpoints/{endpointId}/test': 'webhooks.endpoints.sendTest',
  'GET /api/developer/webhooks/endpoints/{endpointId}/deliveries': 'webhooks.deliveries.list',
  'POST /api/developer/webhooks/endpoints/{endpointId}/redeliver-failed': 'webhooks.deliveries.redeliverFailed',
  'POST /api/developer/webhooks/deliveries/{deliveryId}/redeliver': 'webhooks.deliveries.redeliver',

  'POST /api/licensing/v1/activate': 'licensing.activate',
  'POST /api/licensing/v1/validate': 'licensing.validate',
  'POST /api/licensing/v1/deactivate': 'licensing.deactivate',
  'GET /api/licensing/v1/keys': 'licensing.keys',
};

/** What single operations need beyond the general rules. */
function amend(doc: OpenApiDocument): void {
  const op = (method: string, path: string) => doc.paths[path]?.[method];

  // Open unless METRICS_TOKEN is set; then that bearer token.
  doc.components.securitySchemes = {
    ...doc.components.securitySchemes,
    metricsToken: { type: 'http', scheme: 'bearer', description: 'The METRICS_TOKEN, when the deployment sets one' },
  };
  const metrics = op('get', '/metrics');
  if (metrics) {
    metrics.security = [{}, { metricsToken: [] }];
    const ok = metrics.responses['200'];
    if (ok) ok.content = { 'text/plain': { schema: { type: 'string' }, example: '# HELP http_requests_total Requests by route and status\n' } };
    metrics.responses['401'] = { description: 'METRICS_TOKEN is set and the request does not carry it (`UNAUTHENTICATED`)' };
  }

  const download = op('get', '/api/private-links/{kind}/{id}');
  const file = download?.responses['200'];
  if (file) file.content = { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' }, example: '(file contents)' } };

  // What Patchbay sends to the developer's endpoints: one entry per event type of the catalogue.
  doc.webhooks = webhooksSection();
  doc.components.securitySchemes = { ...doc.components.securitySchemes, webhookSignature: WEBHOOK_SIGNATURE_SCHEME };

  const created = op('post', '/api/developer/products')?.responses['201'];
  if (created) created.headers = { ...created.headers, Location: { $ref: '#/components/headers/Location' } };
}

export function openApiOptions(publicBaseUrl: string): OpenApiOptions {
  return { publicBaseUrl, components: OPENAPI_COMPONENTS, operationIds: OPERATION_IDS, amend };
}
