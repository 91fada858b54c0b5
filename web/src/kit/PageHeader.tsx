import { Group, Stack, Text, Title } from '@mantine/core';
import { type ReactNode, useContext, useEffect, useRef } from 'react';
import { useLocation, useNavigationType } from 'react-router';
import { AppNameContext } from './Shell';

/**
 * The page's one h1, its description and actions. It names the document (the tab, history and
 * screen readers) and, after following a link inside the app, takes the focus so keyboard and
 * screen reader users start at the new page instead of a link that no longer exists.
 */
export function PageHeader({ title, description, actions }: { title: string; description?: ReactNode; actions?: ReactNode }) {
  const appName = useContext(AppNameContext);
  const heading = useRef<HTMLHeadingElement>(null);
  const location = useLocation();
  useEffect(() => {
    document.title = `${title} · ${appName}`;
  }, [title, appName]);
  const navigation = useNavigationType();
  useEffect(() => {
    // Only after following a link: a first load, a reload or the back button keep the browser's own focus.
    if (navigation === 'PUSH') heading.current?.focus();
  }, [location.key, navigation]);
  return (
    <Group justify="space-between" align="flex-start" mb="lg" wrap="wrap" gap="sm">
      <Stack gap={4}>
        <Title order={1} size="h2" ref={heading} tabIndex={-1} style={{ outline: 'none' }}>
          {title}
        </Title>
        {description && <Text c="dimmed">{description}</Text>}
      </Stack>
      {actions && <Group gap="sm">{actions}</Group>}
    </Group>
  );
}
