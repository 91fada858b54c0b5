import { IconReportMoney, IconSend } from '@tabler/icons-react';
import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import type { ConsoleNavItem } from '../nav';

/** Partner money: the accounting, payouts and one payout run. */
export const moneyRoutes: RouteObject[] = [
  { path: 'money/accounting', ...lazyPage(() => import('./AccountingPage')) },
  { path: 'money/payouts', ...lazyPage(() => import('./PayoutsPage')) },
  { path: 'money/payouts/runs/:runId', ...lazyPage(() => import('./PayoutRunPage')) },
];

export const moneyNav: ConsoleNavItem[] = [
  { to: '/money/accounting', label: 'Partner accounting', icon: <IconReportMoney size={18} aria-hidden />, permission: 'partners.view' },
  { to: '/money/payouts', label: 'Payouts', icon: <IconSend size={18} aria-hidden />, permission: 'partners.view' },
];
