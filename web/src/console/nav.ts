import type { NavItem } from '../kit/Shell';
import type { Permission } from './member-access';

/**
 * A navigation entry of the console with the permission its page needs (null: every member may
 * open it): the shell lists only what the member may open.
 */
export interface ConsoleNavItem extends NavItem {
  permission: Permission | null;
  /** The API also needs access to every product (webhooks, checkout connections): hidden from product-scoped members. */
  allProducts?: boolean;
}
