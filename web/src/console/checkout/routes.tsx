import { IconPlugConnected } from '@tabler/icons-react';
import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import type { ConsoleNavItem } from '../nav';
import { Allowed } from '../session/ConsoleFrame';

/** Checkout connections to Stripe, Paddle and Lemon Squeezy (purchases.manage; the API also asks for all products). */
export const checkoutRoutes: RouteObject[] = [
  {
    element: <Allowed permission="purchases.manage" allProducts />,
    children: [
      { path: 'checkout-connections', ...lazyPage(() => import('./ConnectionsPage')) },
      { path: 'checkout-connections/:connectionId', ...lazyPage(() => import('./ConnectionPage')) },
    ],
  },
];

export const checkoutNav: ConsoleNavItem[] = [
  { to: '/checkout-connections', label: 'Checkout connections', icon: <IconPlugConnected size={18} aria-hidden />, permission: 'purchases.manage', allProducts: true },
];
