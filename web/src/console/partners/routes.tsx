import { IconCalculator, IconUsersGroup } from '@tabler/icons-react';
import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import type { ConsoleNavItem } from '../nav';

/** Partner programs: the list, a new program, one program, and the split preview. */
export const partnerRoutes: RouteObject[] = [
  { path: 'partners/programs', ...lazyPage(() => import('./ProgramsPage')) },
  { path: 'partners/programs/new', ...lazyPage(() => import('./NewProgramPage')) },
  { path: 'partners/programs/:id', ...lazyPage(() => import('./ProgramPage')) },
  { path: 'partners/preview', ...lazyPage(() => import('./PreviewPage')) },
];

export const partnerNav: ConsoleNavItem[] = [
  { to: '/partners/programs', label: 'Partner programs', icon: <IconUsersGroup size={18} aria-hidden />, permission: 'partners.view' },
  { to: '/partners/preview', label: 'Split preview', icon: <IconCalculator size={18} aria-hidden />, permission: 'partners.view' },
];
