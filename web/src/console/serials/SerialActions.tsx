import { Button, Group, Modal, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { api, ApiProblem, unwrap } from '../../api/client';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { type AccessAction, ACCESS_ACTIONS, type Serial } from './model';

export type PortalOrderAction = 'hide' | 'show';

/** What the reason-and-note form sends: every serial action takes the same optional pair (release requires the reason). */
type Reasoned = {
  reason?: string;
  note?: string;
};

/** A small form for a consequential action: what it does, a reason and a note for the audit trail, confirm or cancel. */
export function ReasonDialog({
  title,
  explanation,
  confirmLabel,
  danger,
  reasonRequired = false,
  pending,
  error,
  onConfirm,
  onClose,
}: {
  title: string;
  explanation: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  reasonRequired?: boolean;
  pending: boolean;
  error: unknown;
  onConfirm: (body: Reasoned) => void;
  onClose: () => void;
}) {
  const [reason, setReason] = useState('');
  const [note, setNote] = useState('');
  const problem = error instanceof ApiProblem ? error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onConfirm({ ...(reason.trim() ? { reason: reason.trim() } : {}), ...(note.trim() ? { note: note.trim() } : {}) });
  };
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title={title}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Text size="sm">{explanation}</Text>
          <TextInput
            label="Reason"
            description="Kept in the serial’s audit trail"
            required={reasonRequired}
            maxLength={500}
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            error={problem?.fieldError('reason')}
          />
          <Textarea label="Note (optional)" maxLength={2000} autosize minRows={2} value={note} onChange={(e) => setNote(e.currentTarget.value)} error={problem?.fieldError('note')} />
          {error != null && !problem?.fieldError('reason') && !problem?.fieldError('note') && <ProblemAlert error={error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" color={danger ? 'red.8' : undefined} loading={pending}>
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

function postAction(serialId: number, action: AccessAction, body: Reasoned) {
  const init = { params: { path: { serialId } }, body };
  switch (action) {
    case 'activate':
      return unwrap(api.POST('/api/developer/serials/{serialId}/activate', init));
    case 'reactivate':
      return unwrap(api.POST('/api/developer/serials/{serialId}/reactivate', init));
    case 'deactivate':
      return unwrap(api.POST('/api/developer/serials/{serialId}/deactivate', init));
    case 'suspend':
      return unwrap(api.POST('/api/developer/serials/{serialId}/suspend', init));
    case 'unsuspend':
      return unwrap(api.POST('/api/developer/serials/{serialId}/unsuspend', init));
    case 'revoke':
      return unwrap(api.POST('/api/developer/serials/{serialId}/revoke', init));
  }
}

export type ActionAnswer = Awaited<ReturnType<typeof postAction>>;

/** One access action on a serial, confirmed with a reason and note; answers the serial and how many activations it deactivated. */
export function AccessActionDialog({ serial, action, onDone, onClose }: { serial: { id: number; code: string }; action: AccessAction; onDone: (answer: ActionAnswer) => void; onClose: () => void }) {
  const spec = ACCESS_ACTIONS.find((a) => a.action === action)!;
  const run = useMutation({ mutationFn: (body: Reasoned) => postAction(serial.id, action, body), onSuccess: onDone });
  return (
    <ReasonDialog
      title={`${spec.label} ${serial.code}`}
      explanation={`${spec.effect} Devices: ${spec.devices}.`}
      confirmLabel={spec.label}
      danger={spec.devices === 'released'}
      pending={run.isPending}
      error={run.error}
      onConfirm={(body) => run.mutate(body)}
      onClose={onClose}
    />
  );
}

/** Hiding or showing the serial's order in the customer portal: presentation only, nothing about ownership or payment changes. */
export function PortalOrderDialog({ serial, action, onDone, onClose }: { serial: { id: number; code: string }; action: PortalOrderAction; onDone: (hidden: boolean) => void; onClose: () => void }) {
  const run = useMutation({
    mutationFn: (body: Reasoned) => {
      const init = { params: { path: { serialId: serial.id } }, body };
      return unwrap(
        action === 'hide'
          ? api.POST('/api/developer/serials/{serialId}/customer-portal-order/hide', init)
          : api.POST('/api/developer/serials/{serialId}/customer-portal-order/show', init),
      );
    },
    onSuccess: (answer) => onDone(answer.customerPortalHidden),
  });
  return (
    <ReasonDialog
      title={action === 'hide' ? `Hide the order of ${serial.code} in the customer portal` : `Show the order of ${serial.code} in the customer portal`}
      explanation="Only what the buyer sees in the customer portal changes: ownership, payment and refund state stay as they are."
      confirmLabel={action === 'hide' ? 'Hide the order' : 'Show the order'}
      pending={run.isPending}
      error={run.error}
      onConfirm={(body) => run.mutate(body)}
      onClose={onClose}
    />
  );
}

/** The actions the documented lifecycle allows from the serial's status. */
export const actionsFrom = (status: Serial['status'] | undefined) => ACCESS_ACTIONS.filter((a) => status === undefined || a.from.includes(status));
