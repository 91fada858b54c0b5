// The products module's face: the catalogue, delivery files, versions, reviews, product credentials
// and the permission-filtered dashboard. app.ts, other modules and the operator tooling import this
// file only.
import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../../platform/auth/define-route.js';
import type { Db } from '../../platform/db/database.js';
import type { PrivateLinks } from '../../platform/links/private-links.js';
import type { PrivateStorage } from '../../platform/storage/storage.js';
import type { ProductCredentials } from './product-credentials.service.js';
import { dashboardRoutes } from './product-dashboard.routes.js';
import type { PackageStatusSource } from './product-dashboard.service.js';
import { productFileRoutes } from './product-files.routes.js';
import { ProductFiles } from './product-files.service.js';
import { reviewRoutes } from './product-reviews.routes.js';
import { ReviewRecord } from './product-reviews.schemas.js';
import { versionRoutes } from './product-versions.routes.js';
import { VersionRecord } from './product-versions.schemas.js';
import { productRoutes } from './products.routes.js';
import { FileMetadata, ProductRow, RestApi } from './products.schemas.js';

// What other modules use: products in the caller's scope, and the product activity they add to.
export {
  getVisibleProductOrThrow,
  visibleProducts,
  visibleProductsOrThrow,
  listVisibleProducts,
  ProductResolver,
  productRecordOrThrow,
  recordProductEvent,
  workspaceStorefront,
  type ProductRecord,
  type ProductRef,
} from './products.service.js';
export { ProductMapping } from './product-mapping.js';
// Credentials: packages embed the product key; the licensing runtime looks keys up and records their use.
export { type CredentialState, keyForRuntime, ProductCredentials, productKeyHash, touchCredentials } from './product-credentials.service.js';
export type { PackageStatusSource } from './product-dashboard.service.js';
/** The private-link kind under which delivery files are served (the buyers' portal hands out the same links). */
export { FILES_LINK_KIND } from './product-files.service.js';
// The operator tooling (fixtures, the CLI) makes products, versions, reviews and files as the API does.
export { createProduct, listProducts, toProductRow } from './products.service.js';
export { createVersion } from './product-versions.service.js';
export { importReviews } from './product-reviews.service.js';
export { registerExternalFile } from './product-files.service.js';
/** The module's job handlers (app.ts registers them on the runner). */
export { registerProductJobs } from './products.jobs.js';
export { CreateProductBody, FileMetadata, PRODUCT_STATUSES, ProductRow, RestApi } from './products.schemas.js';
export { VersionRecord } from './product-versions.schemas.js';
export { ReviewRecord } from './product-reviews.schemas.js';

/** Delivery files up to 2 GiB unless configured otherwise. */
export const DEFAULT_FILE_UPLOAD_MAX_BYTES = 2 * 1024 * 1024 * 1024;

export interface ProductsDeps {
  db: Db;
  storage: PrivateStorage;
  links: PrivateLinks;
  credentials: ProductCredentials;
  /** What the packages module reports about a product's package (the dashboard shows it; it never builds one). */
  packages: PackageStatusSource;
  /** The API base URL plugins call (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** The largest delivery file accepted (bytes). */
  fileUploadMaxBytes?: number | undefined;
}

export function register(app: FastifyInstance, deps: ProductsDeps): void {
  // Named schemas the answers refer to ($ref), registered on the root before any route uses them.
  for (const schema of [ProductRow, FileMetadata, RestApi, VersionRecord, ReviewRecord]) app.addSchema(schema);
  const { db, storage, links, credentials, packages, publicBaseUrl } = deps;
  const files = new ProductFiles(db, storage, links, deps.fileUploadMaxBytes ?? DEFAULT_FILE_UPLOAD_MAX_BYTES);
  registerRoutes(app, [
    ...productRoutes({ db }),
    ...productFileRoutes({ files }),
    ...dashboardRoutes({ ctx: { db, credentials, packages, publicBaseUrl } }),
    ...versionRoutes({ db }),
    ...reviewRoutes({ db }),
  ]);
}
