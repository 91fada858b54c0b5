import { Badge } from '@mantine/core';

const COLORS: Record<string, string> = {
  active: 'green',
  ready: 'green',
  paid: 'green',
  accepted: 'blue',
  submitted: 'blue',
  reserved: 'blue',
  pending: 'yellow',
  onboarding: 'yellow',
  paused: 'orange',
  reconciliation_required: 'orange',
  failed: 'red',
  ended: 'gray',
  revoked: 'gray',
  expired: 'gray',
  replaced: 'gray',
  disabled: 'gray',
};

/** A status word as a coloured badge; the word itself carries the meaning (colour is never the only signal). */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light" autoContrast>
      {status.replace(/_/g, ' ')}
    </Badge>
  );
}
