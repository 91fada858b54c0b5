import { IconApi, IconSettings, IconUsersGroup } from '@tabler/icons-react';
import type { RouteObject } from 'react-router';
import { lazyPage } from '../../kit/mount';
import type { ConsoleNavItem } from '../nav';
import { Allowed } from '../session/ConsoleFrame';

/** The team (members.manage), API tokens (every member, for their own) and the workspace settings (every member reads them). */
export const teamRoutes: RouteObject[] = [
  { element: <Allowed permission="members.manage" />, children: [{ path: 'team', ...lazyPage(() => import('./MembersPage')) }] },
  { path: 'api-tokens', ...lazyPage(() => import('./ApiTokensPage')) },
  { path: 'settings', ...lazyPage(() => import('../settings/WorkspaceSettingsPage')) },
];

export const teamNav: ConsoleNavItem[] = [
  { to: '/team', label: 'Team', icon: <IconUsersGroup size={18} aria-hidden />, permission: 'members.manage' },
  { to: '/api-tokens', label: 'API tokens', icon: <IconApi size={18} aria-hidden />, permission: null },
  { to: '/settings', label: 'Settings', icon: <IconSettings size={18} aria-hidden />, permission: null },
];
