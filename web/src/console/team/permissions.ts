import type { Permission } from '../member-access';

/**
 * What each catalogue permission lets a teammate do, in the console's words, grouped as the console
 * is. A permission the API adds before this list knows it still shows, under its own name.
 */
const GROUPS: Array<{ group: string; permissions: Array<[Permission, string]> }> = [
  {
    group: 'Customers, serials and purchases',
    permissions: [
      ['customers.view', 'See and export customers'],
      ['customers.manage', 'Import and remove customers'],
      ['serials.view', 'See and export serials, their devices and audit trail'],
      ['serials.manage', 'Generate and import serials, change their access, release seats'],
      ['purchases.view', 'See and export purchases'],
      ['purchases.manage', 'Import purchases and grant access'],
      ['purchases.refund', 'See which orders can be refunded'],
    ],
  },
  {
    group: 'Products',
    permissions: [
      ['products.view', 'See products, dashboards and versions'],
      ['products.manage', 'Create and edit products and versions'],
      ['analytics.view', 'See sales statistics and activity'],
      ['reviews.view', 'See reviews'],
      ['reviews.manage', 'Import and moderate reviews'],
      ['product_files.view', 'See delivery files, download packages'],
      ['product_files.manage', 'Upload files, build and rebuild packages'],
      ['credentials.view', 'See credential status and REST configuration'],
      ['storefront.manage', 'Download the storefront package'],
    ],
  },
  {
    group: 'Partners',
    permissions: [
      ['partners.view', 'See partner programs and their accounting'],
      ['partners.manage', 'Create and change programs, run payouts, turn programs on or off'],
    ],
  },
  {
    group: 'Workspace',
    permissions: [
      ['members.manage', 'Invite, change and remove teammates'],
      ['workspace.manage', 'Change the workspace settings'],
    ],
  },
];

const DESCRIBED = new Map<string, string>(GROUPS.flatMap((g) => g.permissions));

export const describePermission = (name: string) => DESCRIBED.get(name) ?? name;

/**
 * The permissions `held` (what the signing-in member holds: nobody grants more) in the console's
 * groups, and any the console has no words for yet under "Other".
 */
export function permissionGroups(held: readonly string[]): Array<{ group: string; permissions: Array<{ name: string; label: string }> }> {
  const have = new Set(held);
  const groups = GROUPS.map((g) => ({ group: g.group, permissions: g.permissions.filter(([name]) => have.has(name)).map(([name, label]) => ({ name, label })) }));
  const other = held.filter((name) => !DESCRIBED.has(name)).map((name) => ({ name, label: name }));
  return [...groups, { group: 'Other', permissions: other }].filter((g) => g.permissions.length > 0);
}
