import type { preHandlerAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import { defineRoute } from '../../platform/auth/define-route.js';
import { CUSTOMER_SESSION_COOKIE } from '../../platform/auth/policy.js';
import type { Db } from '../../platform/db/database.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { LINK_TTL_SECONDS, LinkAnswerSchema } from '../../platform/links/private-links.js';
import { getBuyerOrder, listBuyerOrders } from '../purchases/index.js';
import { PORTAL_SIGN_IN_TTL_MINUTES } from './customer-portal.emails.js';
import {
  Accepted,
  DownloadList,
  Ended,
  FileParams,
  LicenseList,
  LicenseRow,
  LinkRequestBody,
  MachineRequest,
  MachineRequestUpload,
  OfflineActivation,
  OrderIdParams,
  OrderList,
  OrderRow,
  OrdersQuery,
  PortalSettings,
  PortalSettingsChange,
  SeatParams,
  SerialParams,
  SessionAnswer,
  SessionInfo,
  SignInBody,
} from './customer-portal.schemas.js';
import type { PortalDownloads } from './downloads.service.js';
import { type PortalLicenses, RELEASE_WINDOW_DAYS } from './licenses.service.js';
import { CUSTOMER_SESSION_TTL_HOURS, type CustomerSessions } from './sessions.service.js';
import { changePortalSettings, portalSettings } from './settings.service.js';

// The cookie goes to the portal's API only: no developer or partner route ever receives it.
const COOKIE_PATH = '/api/customer-portal';
const BASE = '/api/customer-portal';

export interface PortalRouteDeps {
  db: Db;
  publicBaseUrl: string;
  sessions: CustomerSessions;
  licenses: PortalLicenses;
  downloads: PortalDownloads;
  releasesPerSerial: number;
  linksPerHour: number;
  keyResendsPerHour: number;
  limits: { link: preHandlerAsyncHookHandler; signIn: preHandlerAsyncHookHandler; keyResend: preHandlerAsyncHookHandler };
  readMachineRequestFile: preValidationAsyncHookHandler;
}

export const sessionRoutes = ({ sessions, linksPerHour, limits }: PortalRouteDeps) => [
  defineRoute({
    method: 'POST',
    url: `${BASE}/session/link`,
    policy: { auth: 'public' },
    preHandler: limits.link,
    schema: {
      tags: ['customer portal: session'],
      summary: 'E-mail a buyer a one-time sign-in link',
      description:
        `Sends \`PUBLIC_BASE_URL/portal/<workspace>/sign-in#token=pcl_…\` (single use, valid ${PORTAL_SIGN_IN_TTL_MINUTES} minutes) when the address is an active customer of that workspace and its portal is on. ` +
        'The answer is the same, and the request does the same work, whether or not the workspace or the customer exists: the link is sent by a background job. ' +
        `At most ${linksPerHour} requests per workspace and address, and ${linksPerHour * 4} per client address, an hour (429 RATE_LIMITED).`,
      body: LinkRequestBody,
      response: { 202: Accepted, ...errorResponses(400, 429) },
    },
    handler: async ({ request, reply }) => {
      await sessions.requestLink(request.body.workspace, request.body.email);
      return reply.code(202).send({ accepted: true, message: 'If the address belongs to a customer of this store, a sign-in link is on its way.' });
    },
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/session`,
    policy: { auth: 'public' },
    preHandler: limits.signIn,
    schema: {
      tags: ['customer portal: session'],
      summary: 'Sign in with a sign-in link’s token',
      description:
        'Uses the link once and opens a buyer session: an HttpOnly, SameSite=Lax cookie (Secure over HTTPS) scoped to the portal API for browsers, and the same token in the body for other clients (`Authorization: Bearer pcs_…`). ' +
        `Sessions last ${CUSTOMER_SESSION_TTL_HOURS} hours and belong to one workspace. An unknown, used or expired token answers 401; a workspace whose portal is off, 404.`,
      body: SignInBody,
      response: { 201: SessionAnswer, ...errorResponses(400, 401, 404, 429) },
    },
    handler: async ({ request, reply }) => {
      const session = await sessions.signIn(request.body.token);
      reply.setCookie(CUSTOMER_SESSION_COOKIE, session.token, {
        httpOnly: true,
        sameSite: 'lax',
        secure: request.protocol === 'https',
        path: COOKIE_PATH,
        maxAge: CUSTOMER_SESSION_TTL_HOURS * 3600,
      });
      reply.header('cache-control', 'no-store');
      return reply.code(201).send(session);
    },
  }),
  defineRoute({
    method: 'GET',
    url: `${BASE}/session`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: session'],
      summary: 'Who is signed in',
      description: 'The signed-in buyer, their workspace (name and portal address) and when the session ends.',
      response: { 200: SessionInfo, ...errorResponses(401, 404) },
    },
    handler: ({ customer }) => sessions.current(customer),
  }),
  defineRoute({
    method: 'DELETE',
    url: `${BASE}/session`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: session'],
      summary: 'Sign out',
      description: 'Ends the session (its token stops working at once) and clears the cookie.',
      response: { 200: Ended, ...errorResponses(401, 404) },
    },
    handler: async ({ reply, customer }) => {
      await sessions.signOut(customer);
      reply.clearCookie(CUSTOMER_SESSION_COOKIE, { path: COOKIE_PATH });
      return { ended: true as const };
    },
  }),
];

export const orderRoutes = ({ db }: PortalRouteDeps) => [
  defineRoute({
    method: 'GET',
    url: `${BASE}/orders`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: orders'],
      summary: 'The buyer’s orders',
      description:
        'The signed-in buyer’s orders in this workspace, newest first, with their items, amounts (minor units) and refund state. ' +
        'An order the vendor hid with `customer-portal-order/hide` is not listed until `show` brings it back.',
      querystring: OrdersQuery,
      response: { 200: OrderList, ...errorResponses(400, 401, 404) },
    },
    handler: ({ request, customer }) => listBuyerOrders(db, customer, request.query),
  }),
  defineRoute({
    method: 'GET',
    url: `${BASE}/orders/:orderId`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: orders'],
      summary: 'One of the buyer’s orders',
      description: 'A hidden order, another buyer’s or another workspace’s answers 404.',
      params: OrderIdParams,
      response: { 200: OrderRow, ...errorResponses(400, 401, 404) },
    },
    handler: ({ request, customer }) => getBuyerOrder(db, customer, request.params.orderId),
  }),
];

export const licenseRoutes = ({ licenses, releasesPerSerial, keyResendsPerHour, limits, readMachineRequestFile }: PortalRouteDeps) => [
  defineRoute({
    method: 'GET',
    url: `${BASE}/licenses`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: licenses'],
      summary: 'The buyer’s license keys and the devices using them',
      description: 'Every serial assigned to the buyer in this workspace (code, product, status, expiry, seats used and allowed) with the devices holding its seats.',
      response: { 200: LicenseList, ...errorResponses(401, 404) },
    },
    handler: ({ customer }) => licenses.list(customer),
  }),
  defineRoute({
    method: 'DELETE',
    url: `${BASE}/licenses/:serialId/activations/:activationId`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: licenses'],
      summary: 'Release a device',
      description:
        'Frees the seat this device holds, so the plugin can be activated on another computer; the released machine’s next validation answers `MACHINE_NOT_ACTIVATED`. ' +
        `At most ${releasesPerSerial} releases per serial in ${RELEASE_WINDOW_DAYS} days (429 DEVICE_RELEASE_LIMIT with \`nextReleaseAt\` and Retry-After); refused for a suspended or revoked serial (409 SERIAL_NOT_RELEASABLE). ` +
        'The release appears in the serial’s audit trail with the buyer as its actor. A seat already free answers the license unchanged.',
      params: SeatParams,
      response: { 200: LicenseRow, ...errorResponses(400, 401, 404, 409) },
    },
    handler: ({ request, customer }) => licenses.releaseDevice(customer, request.params.serialId, request.params.activationId),
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/licenses/:serialId/offline-activations`,
    policy: { auth: 'customer' },
    bodyLimit: 64 * 1024,
    preValidation: readMachineRequestFile,
    schema: {
      tags: ['customer portal: licenses'],
      summary: 'Activate a computer without internet (offline activation)',
      description:
        'Takes the machine request file the plugin wrote on the offline computer (as JSON, or as the multipart `file`) and answers the license file to copy back: the same Ed25519-signed license token the licensing runtime issues, bound to that machine, taking one seat of this serial. ' +
        'The plugin verifies it offline with the product’s published key (`/api/licensing/v1/keys`); it lasts the product’s offline grace, never past the serial’s end. The same machine again answers 200 with a fresh file for its seat. ' +
        'A request naming another serial or product answers 422 MACHINE_REQUEST_MISMATCH; a full serial 422 MACHINE_LIMIT_EXCEEDED; an unusable serial its licensing code (LICENSE_SUSPENDED …).',
      params: SerialParams,
      body: {
        content: { 'application/json': { schema: MachineRequest }, 'multipart/form-data': { schema: MachineRequestUpload } },
      } as unknown as typeof MachineRequest,
      response: { 200: OfflineActivation, 201: OfflineActivation, ...errorResponses(400, 401, 404, 413, 415, 422) },
    },
    handler: async ({ request, reply, customer }) => {
      // A multipart upload was read into `{ file }` before validation (machine-request.ts).
      const input = request.isMultipart() ? (request.body as unknown as { file: typeof request.body }).file : request.body;
      const result = await licenses.activateOffline(customer, request.params.serialId, input);
      reply.header('cache-control', 'no-store');
      return reply.code(result.created ? 201 : 200).send(result.body);
    },
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/keys/resend`,
    policy: { auth: 'customer' },
    preHandler: limits.keyResend,
    schema: {
      tags: ['customer portal: licenses'],
      summary: 'E-mail the buyer their license keys',
      description: `Queues an e-mail to the buyer’s address listing their license keys of this workspace (sent by a background job). At most ${keyResendsPerHour} an hour (429 RATE_LIMITED).`,
      response: { 202: Accepted, ...errorResponses(401, 404, 429) },
    },
    handler: async ({ reply, customer }) => {
      await licenses.resendKeys(customer);
      return reply.code(202).send({ accepted: true, message: 'Your license keys are on their way to your e-mail address.' });
    },
  }),
];

export const downloadRoutes = ({ downloads }: PortalRouteDeps) => [
  defineRoute({
    method: 'GET',
    url: `${BASE}/downloads`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: downloads'],
      summary: 'The files the buyer may download',
      description:
        'Delivery files kept in private storage of the products the buyer is entitled to now (an active entitlement; a refunded item’s product is gone), with their version and its changelog. Files the vendor hosts elsewhere are not offered here.',
      response: { 200: DownloadList, ...errorResponses(401, 404) },
    },
    handler: ({ customer }) => downloads.list(customer),
  }),
  defineRoute({
    method: 'POST',
    url: `${BASE}/downloads/:fileId/link`,
    policy: { auth: 'customer' },
    schema: {
      tags: ['customer portal: downloads'],
      summary: 'A private download link for one file',
      description: `An absolute private link valid for ${LINK_TTL_SECONDS} seconds (fetch it at once, never publish it). A file the buyer is not entitled to answers 404; without private storage, 503.`,
      params: FileParams,
      response: { 200: LinkAnswerSchema, ...errorResponses(400, 401, 404, 503) },
    },
    handler: ({ request, customer }) => downloads.link(customer, request.params.fileId),
  }),
];

export const settingsRoutes = ({ db, publicBaseUrl }: PortalRouteDeps) => [
  defineRoute({
    method: 'GET',
    url: '/api/developer/customer-portal',
    policy: { auth: 'account', permission: null },
    schema: {
      tags: ['customer portal: settings'],
      summary: 'The buyers’ portal address to share',
      description: 'Where the workspace’s buyers sign in to see their orders, license keys, devices and downloads (`url`), and whether the portal is on.',
      response: { 200: PortalSettings, ...errorResponses(401, 403) },
    },
    handler: ({ scope }) => portalSettings(db, publicBaseUrl, scope.workspaceId),
  }),
  defineRoute({
    method: 'PATCH',
    url: '/api/developer/customer-portal',
    policy: { auth: 'account', permission: 'workspace.manage', allProducts: true },
    schema: {
      tags: ['customer portal: settings'],
      summary: 'Turn the buyers’ portal on or off, or change its slug',
      description:
        'Off: every portal route answers 404 for this workspace and its buyers’ sessions stop working (they work again when it is turned back on, until they expire). ' +
        'A slug already used by another workspace answers 409 CONFLICT; links with the workspace id keep working after a slug is set.',
      body: PortalSettingsChange,
      response: { 200: PortalSettings, ...errorResponses(400, 401, 403, 409) },
    },
    handler: ({ request, scope }) => changePortalSettings(db, publicBaseUrl, scope.workspaceId, request.body),
  }),
];
