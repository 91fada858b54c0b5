import { Button, Group, List, Modal, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { IconUserMinus } from '@tabler/icons-react';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiProblem, unwrap } from '../../api/client';
import { notify } from '../../kit/notify';
import { ProblemAlert } from '../../kit/ProblemAlert';
import type { Customer } from './CustomersPage';

export function RemoveCustomerButton({ customer, onClick }: { customer: Customer; onClick: () => void }) {
  return (
    <Button size="xs" variant="subtle" color="red" leftSection={<IconUserMinus size={14} aria-hidden />} onClick={onClick} aria-label={`Remove ${customer.email}`}>
      Remove
    </Button>
  );
}

/**
 * Removing a customer relationship, with the confirmation the contract asks for (`confirmation: "yes"`):
 * what goes (the relationship, its marketing records) and what stays (the account, purchases, financial records).
 */
export function RemoveCustomer({ customer, onClose, onRemoved }: { customer: Customer; onClose: () => void; onRemoved: () => void }) {
  const [confirmation, setConfirmation] = useState('');
  const [reason, setReason] = useState('');
  const remove = useMutation({
    mutationFn: () =>
      unwrap(
        api.DELETE('/api/developer/customers/{customerId}', {
          params: { path: { customerId: customer.customer_id } },
          body: { confirmation, ...(reason.trim() ? { reason: reason.trim() } : {}) },
        }),
      ),
    onSuccess: (answer) => {
      notify(answer.alreadyRemoved ? `${customer.email} was already removed.` : `${customer.email} is removed.`, 'green');
      onRemoved();
      onClose();
    },
  });
  const problem = remove.error instanceof ApiProblem ? remove.error : null;
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title={`Remove ${customer.email}`}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          remove.mutate();
        }}
      >
        <Stack>
          <Text size="sm">Removing the customer ends your relationship with them:</Text>
          <List size="sm">
            <List.Item>removed: the customer relationship and its marketing records;</List.Item>
            <List.Item>kept: their account, their purchases and licenses, and the financial records.</List.Item>
          </List>
          <TextInput
            label="Type yes to confirm"
            required
            autoComplete="off"
            value={confirmation}
            onChange={(e) => setConfirmation(e.currentTarget.value)}
            error={problem?.fieldError('confirmation')}
          />
          <Textarea label="Reason (optional)" description="Kept in the audit log" value={reason} onChange={(e) => setReason(e.currentTarget.value)} autosize minRows={2} maxLength={1000} />
          {remove.isError && !problem?.fieldError('confirmation') && <ProblemAlert error={remove.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" color="red.8" loading={remove.isPending} disabled={confirmation.trim().toLowerCase() !== 'yes'}>
              Remove the customer
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
