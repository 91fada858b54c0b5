import { IconKey, IconReceipt, IconUsers } from '@tabler/icons-react';
import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import type { ConsoleNavItem } from '../nav';
import { Allowed } from '../session/ConsoleFrame';

/** Customers, serials and purchases: each behind the view permission its list needs. */
export const recordRoutes: RouteObject[] = [
  { element: <Allowed permission="customers.view" />, children: [{ path: 'customers', ...lazyPage(() => import('../customers/CustomersPage')) }] },
  {
    element: <Allowed permission="serials.view" />,
    children: [
      { path: 'serials', ...lazyPage(() => import('../serials/SerialsPage')) },
      { path: 'serials/:serialId', ...lazyPage(() => import('../serials/SerialPage')) },
    ],
  },
  { element: <Allowed permission="purchases.view" />, children: [{ path: 'purchases', ...lazyPage(() => import('../purchases/PurchasesPage')) }] },
];

export const recordNav: ConsoleNavItem[] = [
  { to: '/customers', label: 'Customers', icon: <IconUsers size={18} aria-hidden />, permission: 'customers.view' },
  { to: '/serials', label: 'Serials', icon: <IconKey size={18} aria-hidden />, permission: 'serials.view' },
  { to: '/purchases', label: 'Purchases', icon: <IconReceipt size={18} aria-hidden />, permission: 'purchases.view' },
];
