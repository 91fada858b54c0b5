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
  created_at: CreatedAt;
}

export interface MembershipsTable {
  workspace_id: number;
  account_id: number;
  owner: Generated<boolean>;
  permissions: Generated<string[]>;
  all_products: Generated<boolean>;
  created_at: CreatedAt;
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
  max_activations: Generated<number>;
  price_cents: Generated<number>;
  currency: Generated<string>;
  created_at: CreatedAt;
}

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
}
