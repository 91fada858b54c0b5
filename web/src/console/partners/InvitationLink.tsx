import { Alert, Button, CopyButton, Group, Stack, Text, TextInput } from '@mantine/core';
import { formatDateTime } from '../../kit/format';
import type { Invitation } from './queries';

/**
 * What became of an invitation: e-mailed through the job runner, or (without our e-mail) its link,
 * shown this once for the developer to deliver: the API never answers it again.
 */
export function InvitationResult({ invitation }: { invitation: Invitation }) {
  if (!invitation.invitation_link) {
    return (
      <Alert color="green" variant="light" title="Invitation sent">
        The partner gets an e-mail with the invitation to terms version {invitation.terms_version}; the link works until {formatDateTime(invitation.expires_at)}.
      </Alert>
    );
  }
  return (
    <Alert color="blue" variant="light" title="Deliver this invitation link yourself">
      <Stack gap="xs">
        <Text size="sm">
          No e-mail was sent. This link is shown once and never again: copy it now and send it to the partner privately. It works until{' '}
          {formatDateTime(invitation.expires_at)}; older links stopped working.
        </Text>
        <Group gap="xs" wrap="nowrap" align="flex-end">
          <TextInput label="Invitation link" value={invitation.invitation_link} readOnly style={{ flex: 1 }} onFocus={(e) => e.currentTarget.select()} />
          <CopyButton value={invitation.invitation_link}>
            {({ copied, copy }) => (
              <Button variant={copied ? 'filled' : 'default'} onClick={copy}>
                {copied ? 'Copied' : 'Copy the link'}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Stack>
    </Alert>
  );
}
