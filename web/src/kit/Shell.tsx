import { AppShell, Burger, Group, NavLink, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { createContext, type ReactNode } from 'react';
import { Link, NavLink as RouterNavLink, useLocation } from 'react-router';
import classes from './shell.module.css';

/** The app's name, for document titles (see PageHeader). */
export const AppNameContext = createContext('Patchbay');

export interface NavItem {
  to: string;
  label: string;
  icon?: ReactNode;
}

/**
 * The frame of every app: a header with the app's name and account actions, navigation that
 * folds behind a menu button on a phone, a skip link for keyboard users, and the page.
 */
export function Shell({
  appName,
  nav,
  actions,
  children,
  home = '/',
}: {
  appName: string;
  nav: NavItem[];
  actions?: ReactNode;
  children: ReactNode;
  /** Where the app's name in the header leads (an app under a per-tenant prefix names its own home). */
  home?: string;
}) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const location = useLocation();
  const hasNav = nav.length > 0;
  return (
    <AppNameContext value={appName}>
      <a
        href="#main"
        className={classes.skip}
        onClick={(event) => {
          // Focus the page without a fragment navigation (it would add #main to the URL and a history entry).
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <AppShell
        header={{ height: 56 }}
        navbar={hasNav ? { width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } } : undefined}
        padding="md"
      >
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between" wrap="nowrap">
            <Group gap="sm" wrap="nowrap">
              {hasNav && <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={opened ? 'Close navigation' : 'Open navigation'} aria-expanded={opened} aria-controls="app-navigation" />}
              <Text component={Link} to={home} className={classes.brand}>
                {appName}
              </Text>
            </Group>
            {actions && <Group gap="xs" wrap="nowrap">{actions}</Group>}
          </Group>
        </AppShell.Header>
        {hasNav && (
          <AppShell.Navbar p="xs" id="app-navigation" aria-label="Main">
          {nav.map((item) => (
              <NavLink
                key={item.to}
                component={RouterNavLink}
                to={item.to}
                label={item.label}
                leftSection={item.icon}
                // Filled: the light variant's tint under the hover colour falls below 4.5:1 contrast.
                variant="filled"
                active={location.pathname === item.to || location.pathname.startsWith(`${item.to}/`)}
                onClick={close}
              />
            ))}
          </AppShell.Navbar>
        )}
        <AppShell.Main id="main" tabIndex={-1}>
          {children}
        </AppShell.Main>
      </AppShell>
    </AppNameContext>
  );
}
