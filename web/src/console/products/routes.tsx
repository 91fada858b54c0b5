import { IconBox, IconBuildingStore } from '@tabler/icons-react';
import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import type { ConsoleNavItem } from '../nav';

/** The product pages: the catalogue, each product's sections, and the storefront package. */
export const productRoutes: RouteObject[] = [
  { path: 'products', ...lazyPage(() => import('./ProductsPage')) },
  {
    path: 'products/:productId',
    ...lazyPage(() => import('./ProductLayout')),
    children: [
      { index: true, ...lazyPage(() => import('./DashboardPage')) },
      { path: 'files', ...lazyPage(() => import('./FilesPage')) },
      { path: 'versions', ...lazyPage(() => import('./VersionsPage')) },
      { path: 'reviews', ...lazyPage(() => import('./ReviewsPage')) },
      { path: 'credentials', ...lazyPage(() => import('./CredentialsPage')) },
      { path: 'packages', ...lazyPage(() => import('./PackagesPage')) },
      { path: 'settings', ...lazyPage(() => import('./SettingsPage')) },
    ],
  },
  { path: 'storefront-package', ...lazyPage(() => import('./StorefrontPackagePage')) },
];

export const productNav: ConsoleNavItem[] = [
  { to: '/products', label: 'Products', icon: <IconBox size={18} aria-hidden />, permission: 'products.view' },
  { to: '/storefront-package', label: 'Storefront package', icon: <IconBuildingStore size={18} aria-hidden />, permission: 'storefront.manage' },
];
