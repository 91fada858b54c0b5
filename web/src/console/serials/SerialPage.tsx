import { Alert, Anchor, Button, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import { IconArrowLeft } from '@tabler/icons-react';
import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { formatDate, formatDateTime } from '../../kit/format';
import { NotFoundPage } from '../../kit/RouteError';
import { PageHeader } from '../../kit/PageHeader';
import { Section } from '../../kit/Section';
import { StatusBadge } from '../../kit/StatusBadge';
import { useMemberAccess } from '../member-access';
import { type AccessAction, type Serial, serialKeys } from './model';
import { AccessActionDialog, actionsFrom, PortalOrderDialog, type PortalOrderAction } from './SerialActions';
import { SerialActivations } from './SerialActivations';
import { SerialEvents } from './SerialEvents';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Stack gap={0}>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text component="div">{children}</Text>
    </Stack>
  );
}

/**
 * One serial: its access (the six actions, with reason and note), the customer-portal visibility
 * of its order, its devices with the release of one seat, and its audit trail. The row comes with
 * the link from the list (and stays in this tab's history); every action answers the serial anew.
 */
export default function SerialPage() {
  const serialId = Number(useParams().serialId);
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const access = useMemberAccess();
  const [dialog, setDialog] = useState<{ kind: 'access'; action: AccessAction } | { kind: 'portal'; action: PortalOrderAction } | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  if (!Number.isInteger(serialId) || serialId < 1) return <NotFoundPage />;
  const serial = (location.state as { serial?: Serial } | null)?.serial?.id === serialId ? (location.state as { serial: Serial }).serial : null;
  const code = serial?.serial ?? `Serial #${serialId}`;
  const mayManage = access.can('serials.manage');
  // Keeps the new row in this history entry, so a reload shows what the action answered.
  const remember = (next: Serial) => void navigate({ pathname: location.pathname, search: location.search }, { replace: true, state: { serial: next } });
  const refresh = () => void client.invalidateQueries({ queryKey: serialKeys.all });

  return (
    <>
      <Anchor component={Link} to="/serials" size="sm">
        <Group gap={4}>
          <IconArrowLeft size={14} aria-hidden /> Serials
        </Group>
      </Anchor>
      <PageHeader title={code} description={serial ? `${serial.product} · created ${formatDate(serial.created_at)}` : 'Open the serial from the list to see its details here.'} />
      <Stack>
        <Section id="access" title="Access">
          {serial && (
            <SimpleGrid cols={{ base: 2, sm: 4 }}>
              <Fact label="Status">
                <StatusBadge status={serial.status} />
              </Fact>
              <Fact label="Devices">{serial.max_activations === 0 ? `${serial.active_activation_count} (no limit)` : `${serial.active_activation_count} of ${serial.max_activations}`}</Fact>
              <Fact label="Customer">{serial.customer_id === null ? 'Not assigned' : `#${serial.customer_id}`}</Fact>
              <Fact label="Expires">{formatDateTime(serial.expires_at)}</Fact>
            </SimpleGrid>
          )}
          {outcome && (
            <Alert color="green" role="status" withCloseButton closeButtonLabel="Dismiss" onClose={() => setOutcome(null)}>
              {outcome}
            </Alert>
          )}
          {mayManage && (
            <Group gap="xs">
              {actionsFrom(serial?.status).map((a) => (
                <Button key={a.action} size="sm" variant={a.devices === 'released' ? 'outline' : 'default'} color={a.devices === 'released' ? 'red' : undefined} onClick={() => setDialog({ kind: 'access', action: a.action })}>
                  {a.label}
                </Button>
              ))}
            </Group>
          )}
        </Section>
        {mayManage && (serial === null || serial.order_id !== null) && (
          <Section id="portal" title="Customer portal">
            <Text size="sm">Hide the order of this serial from the buyer’s customer portal, or show it again. Ownership, payment and refunds do not change.</Text>
            <Group gap="xs">
              <Button size="sm" variant="default" onClick={() => setDialog({ kind: 'portal', action: 'hide' })}>
                Hide the order
              </Button>
              <Button size="sm" variant="default" onClick={() => setDialog({ kind: 'portal', action: 'show' })}>
                Show the order
              </Button>
            </Group>
          </Section>
        )}
        <SerialActivations serialId={serialId} code={code} mayRelease={mayManage} onReleased={(next) => (remember(next), refresh())} />
        <SerialEvents serialId={serialId} />
      </Stack>
      {dialog?.kind === 'access' && (
        <AccessActionDialog
          serial={{ id: serialId, code }}
          action={dialog.action}
          onClose={() => setDialog(null)}
          onDone={(answer) => {
            setDialog(null);
            remember(answer.serial);
            refresh();
            setOutcome(`The serial is ${answer.serial.status}. ${answer.deactivatedActivations === 1 ? '1 activation was' : `${answer.deactivatedActivations} activations were`} deactivated.`);
          }}
        />
      )}
      {dialog?.kind === 'portal' && (
        <PortalOrderDialog
          serial={{ id: serialId, code }}
          action={dialog.action}
          onClose={() => setDialog(null)}
          onDone={(hidden) => {
            setDialog(null);
            refresh();
            setOutcome(hidden ? 'The order is hidden in the customer portal.' : 'The order is shown in the customer portal.');
          }}
        />
      )}
    </>
  );
}
