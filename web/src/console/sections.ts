import { checkoutNav } from './checkout/routes';
import { moneyNav } from './money/routes';
import type { ConsoleNavItem } from './nav';
import { partnerNav } from './partners/routes';
import { productNav } from './products/routes';
import { recordNav } from './records/routes';
import { teamNav } from './team/routes';
import { webhookNav } from './webhooks/routes';

/** The console's sections in navigation order; the shell and the home page show each only to members whose permission allows it. */
export const CONSOLE_NAV: ConsoleNavItem[] = [...recordNav, ...productNav, ...partnerNav, ...moneyNav, ...checkoutNav, ...webhookNav, ...teamNav];
