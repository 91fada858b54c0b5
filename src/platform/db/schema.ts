import type { ColumnType, Generated } from 'kysely';

/** Timestamps are written as Date or ISO strings and always read back as Date. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export interface AccountsTable {
  id: Generated<number>;
  email: string;
  email_normalized: string;
  email_verified: Generated<boolean>;
  created_at: CreatedAt;
}

export interface WorkspacesTable {
  id: Generated<number>;
  name: string;
  billing_eligible: Generated<boolean>;
  storefront_url: Generated<string | null>;
  partner_programs_enabled: Generated<boolean>;
  /** The public name of the buyers' portal (`/portal/<slug>`); null: the portal URL carries the id. */
  slug: Generated<string | null>;
  customer_portal_enabled: Generated<boolean>;
  /** On: a full refund leaves the serial sold with the item active (default off: it is revoked). */
  keep_serials_on_refund: Generated<boolean>;
  created_at: CreatedAt;
}

export interface MembershipsTable {
  workspace_id: number;
  account_id: number;
  owner: Generated<boolean>;
  permissions: Generated<string[]>;
  all_products: Generated<boolean>;
  created_at: CreatedAt;
  /** When the member first signed in after being invited; null: invited, not signed in yet. */
  joined_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  invited_by: number | null;
}

export interface MembershipProductsTable {
  workspace_id: number;
  account_id: number;
  product_id: number;
}

export interface ProductsTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  app_id: string;
  offline_grace_days: Generated<number>;
  max_activations: Generated<number>;
  price_cents: Generated<number>;
  currency: Generated<string>;
  status: Generated<ProductStatus>;
  storefront_url: string | null;
  current_version: string | null;
  description: string | null;
  downloads_total: Generated<number>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type ProductStatus = 'draft' | 'active' | 'archived';

export interface DeveloperCustomersTable {
  id: Generated<number>;
  workspace_id: number;
  account_id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  status: Generated<'active' | 'removed'>;
  source: string;
  search_text: ColumnType<string, never, never>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  removed_at: Timestamp | null;
  removal_reason: string | null;
  /** Verified for this workspace (never the global account's state). */
  email_verified: Generated<boolean>;
}

export interface CustomerProductsTable {
  workspace_id: number;
  developer_customer_id: number;
  product_id: number;
  created_at: CreatedAt;
}

export interface MarketingConsentsTable {
  id: Generated<number>;
  workspace_id: number;
  account_id: number;
  channel: string;
  source: string;
  consented_at: CreatedAt;
}

export interface WorkspaceStatsTable {
  workspace_id: number;
  active_customers: Generated<number>;
  customers_version: Generated<number>;
  serials: Generated<number>;
  order_items: Generated<number>;
  order_items_version: Generated<number>;
}

export interface OrdersTable {
  id: Generated<number>;
  workspace_id: number;
  customer_id: number | null;
  reference: string;
  channel: Generated<string>;
  status: Generated<string>;
  refund_status: Generated<string>;
  total_cents: Generated<number>;
  currency: Generated<string>;
  customer_portal_hidden: Generated<boolean>;
  provider: Generated<string>;
  reseller_id: number | null;
  external_reference: string | null;
  purchased_at: Generated<Date>;
  created_at: CreatedAt;
}

export type PurchaseChannel = 'managed_checkout' | 'external_store' | 'manual_grant' | 'import';
export type PurchaseRecordType = 'sale' | 'free' | 'grant' | 'subscription';
export type PurchaseStatus = 'pending' | 'paid' | 'granted' | 'imported' | 'cancelled';
export type RefundStatus = 'none' | 'partial' | 'full';

export interface OrderItemsTable {
  id: Generated<number>;
  workspace_id: number;
  order_id: number;
  product_id: number;
  customer_id: number;
  channel: PurchaseChannel;
  provider: string;
  reseller_id: number | null;
  record_type: PurchaseRecordType;
  status: PurchaseStatus;
  refund_status: Generated<RefundStatus>;
  currency: string;
  price_cents: number;
  sale_price_cents: number;
  refunded_cents: Generated<number>;
  external_reference: string | null;
  serial_id: number | null;
  purchased_at: Date | string;
  refunded_at: Date | string | null;
  created_at: CreatedAt;
}

export interface ManualGrantsTable {
  id: Generated<number>;
  workspace_id: number;
  grant_request_id: string | null;
  request_hash: string;
  grant_type: 'perpetual' | 'subscription' | 'existing_serial';
  actor_account_id: number | null;
  customer_id: number;
  reason: string;
  note: string | null;
  response: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: CreatedAt;
}

export interface EntitlementsTable {
  id: Generated<number>;
  workspace_id: number;
  customer_id: number;
  product_id: number;
  source: 'purchase' | 'grant' | 'import';
  kind: 'perpetual' | 'subscription';
  status: Generated<'active' | 'revoked'>;
  order_item_id: number;
  manual_grant_id: number | null;
  serial_id: number | null;
  starts_at: Date | string;
  ends_at: Date | string | null;
  created_at: CreatedAt;
}

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed';

export interface JobsTable {
  id: Generated<number>;
  queue: Generated<string>;
  kind: string;
  workspace_id: number | null;
  payload: ColumnType<unknown, string | undefined, string>;
  state: Generated<JobState>;
  run_after: Generated<Date>;
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  lease_until: Date | null;
  locked_by: string | null;
  last_error: string | null;
  result: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  finished_at: Date | null;
}

export type SerialStatus = 'available' | 'redeemed' | 'suspended' | 'deactivated' | 'revoked';

export interface SerialsTable {
  id: Generated<number>;
  workspace_id: number;
  product_id: number;
  code: string;
  code_key: ColumnType<string, never, never>;
  status: Generated<SerialStatus>;
  customer_id: number | null;
  origin: 'generated' | 'imported' | 'granted';
  max_activations: number;
  active_activation_count: Generated<number>;
  expires_at: Date | null;
  promo_price_cents: number | null;
  promo_start: Date | null;
  promo_expires: Date | null;
  active_from: Date | null;
  active_to: Date | null;
  batch_tag: string | null;
  notes: string | null;
  order_id: number | null;
  redeemed_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface SerialActivationsTable {
  id: Generated<number>;
  workspace_id: number;
  serial_id: number;
  machine_id: string;
  machine_name: string | null;
  platform: string | null;
  app_version: string | null;
  status: Generated<'active' | 'released'>;
  activated_at: CreatedAt;
  last_validated_at: UpdatedAt;
  released_at: Date | null;
  release_reason: string | null;
}

export interface SerialEventsTable {
  id: Generated<number>;
  workspace_id: number;
  serial_id: number;
  product_id: number;
  action: string;
  actor_type: 'developer' | 'runtime' | 'system' | 'customer';
  actor_account_id: number | null;
  reason: string | null;
  note: string | null;
  before_status: string | null;
  after_status: string | null;
  data: ColumnType<unknown, string | undefined, never>;
  created_at: CreatedAt;
}

export interface ResellersTable {
  id: Generated<number>;
  name: string;
  kind: string;
  created_at: CreatedAt;
}

export interface ResellerRelationshipsTable {
  id: Generated<number>;
  workspace_id: number;
  reseller_id: number;
  developer_share_bps: number | null;
  status: Generated<string>;
  created_at: CreatedAt;
}

export interface LicenseKeysTable {
  kid: string;
  workspace_id: number;
  alg: string;
  public_jwk: ColumnType<Record<string, unknown>, string, never>;
  private_key_encrypted: string;
  status: Generated<'active' | 'retired'>;
  created_at: CreatedAt;
}

export interface AuditLogTable {
  id: Generated<number>;
  workspace_id: number;
  actor_account_id: number | null;
  action: string;
  subject_type: string;
  subject_id: string;
  data: ColumnType<unknown, string, never>;
  created_at: CreatedAt;
}

export interface IdempotencyKeysTable {
  owner: string;
  key: string;
  fingerprint: string;
  state: Generated<'running' | 'done'>;
  status: number | null;
  headers: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  body: string | null;
  created_at: CreatedAt;
  locked_until: Date | string;
  expires_at: Date | string;
}

export type ImportKind = 'customers' | 'serials' | 'purchases';

export interface ImportsTable {
  id: Generated<number>;
  workspace_id: number;
  account_id: number;
  kind: ImportKind;
  state: Generated<'queued' | 'running' | 'succeeded' | 'failed'>;
  source: string;
  total_rows: number;
  processed_rows: Generated<number>;
  imported_count: number | null;
  inserted_count: number | null;
  failed_count: number | null;
  errors: ColumnType<unknown, string | null | undefined, string | null>;
  failure: string | null;
  /** Imports queued before migration 0031: the parsed rows. */
  input: ColumnType<unknown, string | null | undefined, string | null>;
  /** A queued import's upload as it came (JSON body or CSV file) until it ends. */
  upload: ColumnType<Uint8Array | null, Buffer | null | undefined, Buffer | null>;
  /** A CSV upload's productMappings (a JSON body carries its own). */
  upload_mappings: ColumnType<unknown, string | null | undefined, string | null>;
  created_at: CreatedAt;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface ProductFilesTable {
  id: string;
  workspace_id: number;
  product_id: number;
  filename: string;
  platform: string;
  type: string;
  version: string | null;
  managed: boolean;
  storage_key: string | null;
  external_url: string | null;
  content_type: string | null;
  size_bytes: number | null;
  sha256: string | null;
  download_count: Generated<number>;
  uploaded_by: number | null;
  uploaded_at: Generated<Date>;
}

export interface RecipientsTable {
  id: Generated<number>;
  email: string;
  email_verified_at: Date | null;
  active: Generated<boolean>;
  created_at: Generated<Date>;
}

export interface RecipientSignInLinksTable {
  id: Generated<number>;
  email: string;
  token_hash: string;
  /** The token is derived from it and the service's key when the e-mail is sent (null: made before 0019). */
  token_nonce: string | null;
  expires_at: Date;
  used_at: Date | null;
  created_at: Generated<Date>;
}

export interface RecipientSessionsTable {
  id: Generated<number>;
  recipient_id: number;
  token_hash: string;
  verified: boolean;
  expires_at: Date;
  ended_at: Date | null;
  created_at: Generated<Date>;
}

export type AgreementStatus = 'pending' | 'accepted' | 'active' | 'paused' | 'ended';
export type AgreementKind = 'affiliate' | 'collaborator';

export interface PartnerAgreementsTable {
  id: Generated<number>;
  workspace_id: number;
  kind: AgreementKind;
  name: string;
  recipient_email: string;
  recipient_id: number | null;
  status: Generated<AgreementStatus>;
  proposed_terms_version: number;
  accepted_terms_version: number | null;
  accepted_at: Date | null;
  created_by: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** Affiliates only: the public referral link's code (null for collaborators). */
  referral_code: string | null;
}

export interface PartnerReferralVisitsTable {
  id: Generated<number>;
  workspace_id: number;
  agreement_id: number;
  product_id: number | null;
  visited_at: Timestamp;
  address_hash: string;
  user_agent_class: 'bot' | 'mobile' | 'desktop' | 'other';
  created_at: CreatedAt;
}

export interface PartnerTermsTable {
  workspace_id: number;
  agreement_id: number;
  version: number;
  rate_bps: number;
  attribution_window_days: number;
  include_reseller_sales: boolean;
  effective_from: Date;
  payout_policy_version: string;
  created_by: number | null;
  created_at: Generated<Date>;
}

export interface PartnerTermProductsTable {
  workspace_id: number;
  agreement_id: number;
  version: number;
  product_id: number;
  rate_bps: number;
}

export interface PartnerInvitationsTable {
  id: Generated<number>;
  workspace_id: number;
  agreement_id: number;
  terms_version: number;
  email: string;
  token_hash: string;
  /** As for sign-in links: the token is derived from it when the invitation e-mail is sent. */
  token_nonce: string | null;
  status: Generated<'pending' | 'accepted' | 'revoked'>;
  expires_at: Date;
  email_queued: boolean;
  created_by: number | null;
  created_at: Generated<Date>;
  accepted_at: Date | null;
  accepted_by: number | null;
}

export interface PartnerConsentsTable {
  id: Generated<number>;
  workspace_id: number;
  agreement_id: number;
  party: 'developer' | 'recipient';
  account_id: number | null;
  recipient_id: number | null;
  terms_version: number;
  policy_version: string;
  address: string | null;
  created_at: Generated<Date>;
}

export interface PartnerAgreementEventsTable {
  id: Generated<number>;
  workspace_id: number;
  agreement_id: number;
  actor_kind: 'developer' | 'recipient' | 'operator';
  actor_id: number | null;
  action: string;
  from_status: string | null;
  to_status: string | null;
  data: ColumnType<Record<string, unknown>, string | undefined, never>;
  created_at: Generated<Date>;
}

export interface PackageSettingsTable {
  workspace_id: number;
  product_id: number;
  variant: string;
  experience_mode: string;
  ui_width: number;
  ui_height: number;
  release_channel: string;
  updated_at: Generated<Date>;
}

export interface PackageBuildsTable {
  id: string;
  workspace_id: number;
  product_id: number | null;
  environment: ProductEnvironment | null;
  variant: string;
  input_hash: string;
  key_hash: string | null;
  settings: ColumnType<Record<string, unknown>, string, string>;
  template_version: string;
  storage_key: string;
  filename: string;
  sha256: string;
  size_bytes: number;
  built_by: number | null;
  created_at: Generated<Date>;
  last_built_at: Generated<Date>;
}

export interface PackageActivityTable {
  id: Generated<number>;
  workspace_id: number;
  product_id: number | null;
  account_id: number | null;
  action: 'built' | 'reused' | 'generated' | 'regenerated' | 'downloaded' | 'storefront_built';
  build_id: string | null;
  variant: string | null;
  environment: string | null;
  settings: ColumnType<Record<string, unknown> | null, string | null, never>;
  sha256: string | null;
  created_at: Generated<Date>;
}

export interface PackageBuildSlotsTable {
  slot: number;
  holder: string | null;
  lease_until: Date | null;
}

export interface ProductVersionsTable {
  id: Generated<number>;
  workspace_id: number;
  product_id: number;
  version: string;
  changelog: Generated<string>;
  release_date: Date | string | null;
  is_current: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type ReviewStatus = 'published' | 'pending' | 'hidden';

export interface ProductReviewsTable {
  id: Generated<number>;
  workspace_id: number;
  product_id: number;
  account_id: number | null;
  rating: number;
  title: Generated<string>;
  body: Generated<string>;
  status: Generated<ReviewStatus>;
  customer_name: string | null;
  customer_email: string | null;
  imported: Generated<boolean>;
  verified: Generated<boolean>;
  external_id: string | null;
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  updated_at: UpdatedAt;
}

export type ProductEnvironment = 'live' | 'test';

export interface ProductCredentialsTable {
  id: Generated<number>;
  workspace_id: number;
  product_id: number;
  environment: ProductEnvironment;
  app_id: string;
  last_request_at: Date | null;
  last_plugin_connection_at: Date | null;
  created_at: CreatedAt;
}

export interface ProductKeysTable {
  id: Generated<number>;
  workspace_id: number;
  credential_id: number;
  key_hash: string;
  key_sealed: string;
  sealed_with: string;
  preview: string;
  status: Generated<'active' | 'retiring' | 'revoked'>;
  accepted_until: Date | string | null;
  created_at: CreatedAt;
}

export interface ProductEventsTable {
  id: Generated<number>;
  workspace_id: number;
  product_id: number;
  kind: string;
  actor_account_id: number | null;
  data: ColumnType<Record<string, unknown>, string | undefined, never>;
  occurred_at: Generated<Date>;
}

export interface ProductSalesDailyTable {
  workspace_id: number;
  product_id: number;
  day: ColumnType<string, string, string>;
  currency: string;
  orders: number;
  units: number;
  gross_cents: number;
  refunds_cents: number;
}

/** Partner payouts. `amount` is bigint minor units: read it as text (`amount::text`) and make a BigInt, never a number. */
export interface PartnerTransfersTable {
  id: Generated<number>;
  workspace_id: number;
  agreement_id: number;
  recipient_id: number;
  destination_id: number;
  provider: 'card' | 'wallet';
  livemode: boolean;
  currency: string;
  amount: ColumnType<string, string, never>;
  status: 'reserved' | 'submitted' | 'paid' | 'failed' | 'reconciliation_required';
  provider_reference: string | null;
  failure_reason: string | null;
  /** The payout run that holds the transfer until `lease_until`; a run finds the ones whose lease ran out. */
  run_id: string | null;
  lease_until: Timestamp | null;
  attempts: Generated<number>;
  created_at: CreatedAt;
  submitted_at: Timestamp | null;
  settled_at: Timestamp | null;
  updated_at: UpdatedAt;
}

export interface DeveloperSignInLinksTable {
  id: Generated<number>;
  account_id: number;
  purpose: 'sign_in' | 'invitation' | 'banner';
  workspace_id: number | null;
  token_hash: string;
  token_nonce: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: CreatedAt;
}

export interface DeveloperSessionsTable {
  id: Generated<number>;
  account_id: number;
  token_hash: string;
  expires_at: Date;
  ended_at: Date | null;
  created_at: CreatedAt;
}

export interface ApiTokensTable {
  id: Generated<number>;
  workspace_id: number;
  account_id: number;
  name: string;
  prefix: string;
  token_hash: string;
  created_at: CreatedAt;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface PayoutRunsTable {
  id: Generated<number>;
  workspace_id: number;
  requested_by: number | null;
  livemode: boolean;
  state: Generated<'queued' | 'running' | 'succeeded' | 'failed'>;
  result: ColumnType<unknown, string | null | undefined, string | null>;
  failure: string | null;
  created_at: CreatedAt;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface CustomerPortalSignInLinksTable {
  id: Generated<number>;
  workspace_id: number;
  /** The buyer's relationship with the workspace (developer_customers.id). */
  customer_id: number;
  token_hash: string;
  token_nonce: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: CreatedAt;
}

export interface CustomerPortalSessionsTable {
  id: Generated<number>;
  workspace_id: number;
  customer_id: number;
  token_hash: string;
  expires_at: Date;
  ended_at: Date | null;
  created_at: CreatedAt;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'retrying';

export interface WebhookEndpointsTable {
  id: Generated<number>;
  workspace_id: number;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: Generated<boolean>;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: 'manual' | 'failing' | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface WebhookEventsTable {
  id: Generated<number>;
  workspace_id: number;
  event_id: string;
  type: string;
  data: ColumnType<unknown, string, string>;
  created_at: CreatedAt;
  dispatched_at: Date | null;
  /** The job queue (JOBS_QUEUE) of the instance that wrote it: only relays of that queue fan it out. */
  queue: Generated<string>;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  workspace_id: number;
  endpoint_id: number;
  event_row_id: number;
  status: Generated<WebhookDeliveryStatus>;
  attempts: Generated<number>;
  cycle_attempts: Generated<number>;
  schedule: Generated<number>;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_response_body: string | null;
  last_error: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type CheckoutProvider = 'stripe' | 'paddle' | 'lemonsqueezy';
export type CheckoutEventOutcome = 'recorded' | 'replayed' | 'ignored' | 'failed';

export interface CheckoutConnectionsTable {
  id: Generated<number>;
  workspace_id: number;
  provider: CheckoutProvider;
  signing_secret_sealed: string;
  api_key_sealed: string | null;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface CheckoutConnectionProductsTable {
  workspace_id: number;
  connection_id: number;
  provider_product_id: string;
  product_id: number;
}

export interface CheckoutConnectionEventsTable {
  id: Generated<number>;
  workspace_id: number;
  connection_id: number;
  provider_event_id: string;
  type: string;
  outcome: CheckoutEventOutcome;
  reason: string | null;
  body_digest: Buffer;
  payload_sealed: string | null;
  waiting_for: string | null;
  order_item_ids: Generated<number[]>;
  attempts: Generated<number>;
  received_at: CreatedAt;
  processed_at: UpdatedAt;
}

export interface CheckoutConnectionOrdersTable {
  workspace_id: number;
  connection_id: number;
  provider_order_id: string;
  payment_ref: string | null;
  currency: string;
  /** The sold items: [{ key, productId, orderItemId, paidCents, salePriceCents }] (`key`: the provider's line item or product id). */
  items: ColumnType<unknown, string, string>;
  reported_refunded_cents: Generated<number>;
  created_at: CreatedAt;
}

export interface CheckoutConnectionRefundsTable {
  workspace_id: number;
  connection_id: number;
  provider_order_id: string;
  refund_key: string;
  item_key: Generated<string>;
  amount_cents: number;
  created_at: CreatedAt;
}

export interface CheckoutConnectionCustomersTable {
  workspace_id: number;
  connection_id: number;
  provider_customer_id: string;
  email: string;
  name: string | null;
  updated_at: UpdatedAt;
}

export interface DB {
  accounts: AccountsTable;
  workspaces: WorkspacesTable;
  memberships: MembershipsTable;
  membership_products: MembershipProductsTable;
  products: ProductsTable;
  developer_customers: DeveloperCustomersTable;
  customer_products: CustomerProductsTable;
  marketing_consents: MarketingConsentsTable;
  workspace_stats: WorkspaceStatsTable;
  audit_log: AuditLogTable;
  orders: OrdersTable;
  order_items: OrderItemsTable;
  manual_grants: ManualGrantsTable;
  entitlements: EntitlementsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  imports: ImportsTable;
  product_files: ProductFilesTable;
  package_settings: PackageSettingsTable;
  recipients: RecipientsTable;
  recipient_sign_in_links: RecipientSignInLinksTable;
  recipient_sessions: RecipientSessionsTable;
  partner_agreements: PartnerAgreementsTable;
  partner_transfers: PartnerTransfersTable;
  partner_terms: PartnerTermsTable;
  partner_term_products: PartnerTermProductsTable;
  partner_invitations: PartnerInvitationsTable;
  partner_consents: PartnerConsentsTable;
  partner_agreement_events: PartnerAgreementEventsTable;
  partner_referral_visits: PartnerReferralVisitsTable;
  package_builds: PackageBuildsTable;
  package_activity: PackageActivityTable;
  package_build_slots: PackageBuildSlotsTable;
  product_versions: ProductVersionsTable;
  product_reviews: ProductReviewsTable;
  product_credentials: ProductCredentialsTable;
  product_keys: ProductKeysTable;
  product_events: ProductEventsTable;
  product_sales_daily: ProductSalesDailyTable;
  serials: SerialsTable;
  serial_activations: SerialActivationsTable;
  serial_events: SerialEventsTable;
  resellers: ResellersTable;
  reseller_relationships: ResellerRelationshipsTable;
  license_keys: LicenseKeysTable;
  developer_sign_in_links: DeveloperSignInLinksTable;
  developer_sessions: DeveloperSessionsTable;
  api_tokens: ApiTokensTable;
  payout_runs: PayoutRunsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  customer_portal_sign_in_links: CustomerPortalSignInLinksTable;
  customer_portal_sessions: CustomerPortalSessionsTable;
  checkout_connections: CheckoutConnectionsTable;
  checkout_connection_products: CheckoutConnectionProductsTable;
  checkout_connection_events: CheckoutConnectionEventsTable;
  checkout_connection_orders: CheckoutConnectionOrdersTable;
  checkout_connection_refunds: CheckoutConnectionRefundsTable;
  checkout_connection_customers: CheckoutConnectionCustomersTable;
}
