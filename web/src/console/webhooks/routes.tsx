import { IconWebhook } from '@tabler/icons-react';
import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import type { ConsoleNavItem } from '../nav';
import { Allowed } from '../session/ConsoleFrame';

/** Outbound webhooks: endpoints and their deliveries (webhooks.manage; the API also asks for all products). */
export const webhookRoutes: RouteObject[] = [
  {
    element: <Allowed permission="webhooks.manage" allProducts />,
    children: [
      { path: 'webhooks', ...lazyPage(() => import('./WebhooksPage')) },
      { path: 'webhooks/:endpointId', ...lazyPage(() => import('./EndpointPage')) },
    ],
  },
];

export const webhookNav: ConsoleNavItem[] = [{ to: '/webhooks', label: 'Webhooks', icon: <IconWebhook size={18} aria-hidden />, permission: 'webhooks.manage', allProducts: true }];
