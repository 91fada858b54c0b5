import { Accordion, Alert, Anchor, Group, List, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { isProblem } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDateTime } from '../../kit/format';
import { PageHeader } from '../../kit/PageHeader';
import { QueryState } from '../../kit/QueryState';
import { outboxQuery } from './queries';

/**
 * A mail catcher for development: the e-mails this server sent, newest first, with their links, so
 * sign-in and invitation links can be followed without an SMTP server. The route exists outside
 * production only; in production this page is not in the navigation and its route answers 404.
 */
export default function OutboxPage() {
  const outbox = useQuery({ ...outboxQuery, refetchInterval: (query) => (query.state.error ? false : 5_000) });
  if (isProblem(outbox.error, 404)) {
    return (
      <>
        <PageHeader title="Outbox" />
        <EmptyState title="This server has no outbox">
          The outbox exists only in development, with the log or file mail transport. Here e-mail goes out through your mail server.
        </EmptyState>
      </>
    );
  }
  return (
    <>
      <PageHeader title="Outbox" description="The e-mails this server sent (development only), newest first, with their links." />
      <Stack>
        <Alert color="blue" title="Following a link here acts as its recipient">
          A sign-in or invitation link signs this browser in as the address it was sent to, replacing your session. Open it in
          another browser profile to stay signed in as yourself.
        </Alert>
        <QueryState query={outbox} label="Loading the outbox">
          {(rows) =>
            rows.length === 0 ? (
              <EmptyState title="No e-mail sent yet">
                Invite a teammate or ask for a sign-in link: the e-mail appears here within a few seconds.
              </EmptyState>
            ) : (
              <Accordion variant="separated" aria-label="Sent e-mails">
                {rows.map((mail) => (
                  <Accordion.Item key={`${mail.id}-${mail.sentAt}`} value={`${mail.id}-${mail.sentAt}`}>
                    <Accordion.Control>
                      <Group justify="space-between" wrap="wrap" gap="xs">
                        <Text fw={500}>{mail.subject}</Text>
                        <Text size="sm" c="dimmed">
                          to {mail.to} · {formatDateTime(mail.sentAt)}
                        </Text>
                      </Group>
                    </Accordion.Control>
                    <Accordion.Panel>
                      <Stack gap="sm">
                        {mail.links.length > 0 && (
                          <List size="sm" aria-label={`Links in “${mail.subject}”`}>
                            {mail.links.map((link) => (
                              <List.Item key={link}>
                                <Anchor href={link} underline="always" style={{ wordBreak: 'break-all' }}>
                                  {link}
                                </Anchor>
                              </List.Item>
                            ))}
                          </List>
                        )}
                        <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
                          {mail.text}
                        </Text>
                      </Stack>
                    </Accordion.Panel>
                  </Accordion.Item>
                ))}
              </Accordion>
            )
          }
        </QueryState>
      </Stack>
    </>
  );
}
