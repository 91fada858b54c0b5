/**
 * Permission catalogue. Names written in the contract are kept verbatim; the
 * `*.view` / `*.manage` pairs it leaves implicit are added here. `*` grants all,
 * and a workspace owner holds all of them.
 */
export const PERMISSIONS = {
  'customers.view': 'List, search and export customers; download the import template',
  'customers.manage': 'Import customers and remove customer relationships',
  'serials.view': 'List, search and export serials and their audit trail',
  'serials.manage': 'Generate and import serials; apply access actions; release one activation seat; hide/show portal orders',
  'purchases.view': 'List and export purchases; download the import template; purchase filter options',
  'purchases.manage': 'Import purchases and grant access manually',
  'purchases.refund': 'Marks refundable managed-checkout orders with canRefund (refunds happen in the checkout, never through this API)',
  'products.view': 'Product catalogue, product dashboard, versions and package status',
  'products.manage': 'Create and edit products and their version records',
  'analytics.view': 'Dashboard statistics, sales performance and recent activity',
  'reviews.view': 'Private reviews and moderation summaries',
  'reviews.manage': 'Import reviews and moderate them (publish, hold, hide)',
  'product_files.view': 'Delivery-file metadata and plugin package downloads',
  'product_files.manage': 'Upload, register and delete delivery files; generate and regenerate plugin packages',
  'credentials.view': 'Package credential status, plugin connection status and REST configuration',
  'storefront.manage': 'Storefront integration package',
  'partners.view': 'Affiliate and collaborator programs',
  'partners.manage': 'Create and change affiliate and collaborator programs; request payout runs (live mode: the owner only); turn partner programs on or off',
  'members.manage': 'List, invite, change and remove workspace members (never beyond the access the caller holds; the owner cannot be removed or changed)',
  'workspace.manage': 'Change the workspace settings (name, storefront URL, whether a full refund keeps serials active) and turn the buyers’ portal on or off',
  'webhooks.manage': 'Webhook endpoints: create, change, delete and rotate their secrets; send test events; read delivery logs and redeliver (all-products members only)',
} as const;

export type Permission = keyof typeof PERMISSIONS;
export const WILDCARD = '*';

export function isPermission(value: string): value is Permission {
  return Object.hasOwn(PERMISSIONS, value);
}
