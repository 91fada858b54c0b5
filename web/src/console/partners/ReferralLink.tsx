import { ActionIcon, CopyButton, Group, Text, Tooltip } from '@mantine/core';
import { IconCheck, IconCopy } from '@tabler/icons-react';

/** An affiliate's referral link with a copy button (the link is public: it carries no secret). */
export function ReferralLinkCell({ url, name }: { url: string; name: string }) {
  return (
    <Group gap={4} wrap="nowrap">
      <Text size="xs" ff="monospace" truncate maw={220} title={url}>
        {url}
      </Text>
      <CopyButton value={url}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : 'Copy the link'} withArrow>
            <ActionIcon variant={copied ? 'filled' : 'default'} color={copied ? 'green' : undefined} onClick={copy} aria-label={copied ? `Referral link of ${name} copied` : `Copy the referral link of ${name}`}>
              {copied ? <IconCheck size={16} aria-hidden /> : <IconCopy size={16} aria-hidden />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}
