// The purchases module's face: its routes for app.ts, and what other modules may use — the
// managed checkout records its sales and refunds, the partner ledger reacts to recorded purchases,
// the customer portal reads the buyer's own orders (hidden ones left out), the operator fixtures
// load purchases.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import type { ImportRunner } from '../../platform/import/import-runner.js';
import { purchaseRoutes } from './purchases.routes.js';

export interface PurchasesDeps {
  db: Db;
  runner: ImportRunner;
}

export function register(app: FastifyInstance, deps: PurchasesDeps): void {
  registerRoutes(app, purchaseRoutes(deps));
}

export { type BuyerOrder, getBuyerOrder, listBuyerOrders } from './purchases.portal.js';
export {
  type CheckoutSale,
  recordCheckoutRefund,
  recordCheckoutRefunds,
  recordCheckoutSale,
  recordCheckoutSales,
  recordExternalRefund,
  type RecordedSaleItem,
  type SaleSource,
} from './purchases.checkout.js';
/** A group of checkout refunds locks its items together (in id order) before it books them with `recordCheckoutRefunds`. */
export { checkoutItemKey, lockCheckoutItems, type RefundableItem } from './purchases.orders.repo.js';
/** Announced after imported purchases are recorded (the ledger handles it). */
export { PurchasesRecordedJob } from './purchases.jobs.js';
export { type RecordedItem, recordOrderItems } from './purchases.record.js';
export { CHANNELS, PURCHASE_STATUSES, RECORD_TYPES } from './purchases.schemas.js';
/** Named in the OpenAPI document. */
export { FilterOptions, ManualGrantResult, PurchaseRow } from './purchases.schemas.js';
