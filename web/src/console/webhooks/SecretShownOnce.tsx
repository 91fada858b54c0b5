import { ActionIcon, Alert, Button, Code, CopyButton, Group, Stack, Text, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import type { ReactNode } from 'react';

/** An endpoint's signing secret, shown this once with a copy button: the API keeps it sealed and never answers it again. */
export function SecretShownOnce({ secret, children, onClose }: { secret: string; children?: ReactNode; onClose: () => void }) {
  return (
    <Stack>
      <Alert color="yellow" title="Copy the signing secret now">
        This is the only time it is shown. Your receiver verifies every delivery’s <Code>webhook-signature</Code> with it; if it is lost, rotate it.
      </Alert>
      <Group gap="xs" wrap="nowrap">
        <Code block style={{ flex: 1, wordBreak: 'break-all' }} aria-label="Signing secret">
          {secret}
        </Code>
        <CopyButton value={secret}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? 'Copied' : 'Copy the secret'}>
              <ActionIcon variant="default" size="lg" onClick={copy} aria-label="Copy the secret">
                {copied ? <IconCheck size={18} aria-hidden /> : <IconCopy size={18} aria-hidden />}
              </ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      </Group>
      {children && <Text size="sm">{children}</Text>}
      <Group justify="flex-end">
        <Button onClick={onClose}>Done</Button>
      </Group>
    </Stack>
  );
}
