import '@mantine/dates/styles.css';
import { Alert, Button, Checkbox, Code, Group, List, Modal, MultiSelect, NumberInput, SegmentedControl, Select, SimpleGrid, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { DateTimePicker } from '@mantine/dates';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, ApiProblem, type paths, unwrap } from '../../api/client';
import { formatDateTime } from '../../kit/format';
import { notify } from '../../kit/notify';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { useMemberAccess } from '../member-access';
import { useProductOptions } from '../records/products';

type GrantBody = paths['/api/developer/purchases/manual-grant']['post']['requestBody']['content']['application/json'];
type GrantType = NonNullable<GrantBody['grantType']>;

const GRANT_TYPES: Array<{ value: GrantType; label: string }> = [
  { value: 'perpetual', label: 'Perpetual license' },
  { value: 'subscription', label: 'Access until a date' },
  { value: 'existing_serial', label: 'An available serial' },
];

/** Available serials of one product, to assign one (the member needs `serials.view` to list them). */
function AvailableSerial({ productId, value, onChange, error }: { productId: number | null; value: string; onChange: (v: string) => void; error?: string }) {
  const access = useMemberAccess();
  const listed = access.can('serials.view');
  const serials = useQuery({
    queryKey: ['console', 'serials', 'available', productId],
    enabled: listed && productId !== null,
    queryFn: () => unwrap(api.GET('/api/developer/serials/available-by-product', { params: { query: { productId: productId!, limit: 100 } } })),
  });
  if (!listed) return <NumberInput label="Serial id" required min={1} allowDecimal={false} value={value} onChange={(v) => onChange(String(v))} error={error} />;
  return (
    <Select
      label="Serial"
      required
      searchable
      disabled={productId === null}
      placeholder={productId === null ? 'Choose the product first' : serials.data?.rows.length === 0 ? 'No available serial' : undefined}
      data={(serials.data?.rows ?? []).map((s) => ({ value: String(s.id), label: s.serial }))}
      value={value || null}
      onChange={(v) => onChange(v ?? '')}
      error={error}
    />
  );
}

/**
 * Granting access without a payment. The request carries a `grantRequestId` made when the form
 * opened: sending it twice (a double click, a retry after a lost answer) grants once and answers
 * the first result again. A new grant gets a new id.
 */
export function ManualGrant({ onClose, onGranted }: { onClose: () => void; onGranted: () => void }) {
  const products = useProductOptions();
  const [requestId, setRequestId] = useState(() => crypto.randomUUID());
  const [grantType, setGrantType] = useState<GrantType>('perpetual');
  const [productIds, setProductIds] = useState<string[]>([]);
  const [email, setEmail] = useState('');
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [accessUntil, setAccessUntil] = useState<string | null>(null);
  const [serialId, setSerialId] = useState('');
  const [reason, setReason] = useState('');
  const [note, setNote] = useState('');
  const [sendEmails, setSendEmails] = useState(false);
  const single = grantType !== 'perpetual';
  const grant = useMutation({
    mutationFn: (body: GrantBody) => unwrap(api.POST('/api/developer/purchases/manual-grant', { body })),
    onSuccess: (answer) => {
      notify(`${answer.createdCount} granted, ${answer.skippedCount} already held.`, 'green');
      onGranted();
    },
  });
  const problem = grant.error instanceof ApiProblem ? grant.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const text = (value: string) => (value.trim() ? value.trim() : undefined);
    const chosen = productIds.map(Number);
    const body: GrantBody = {
      grantRequestId: requestId,
      grantType,
      ...(single || chosen.length === 1 ? { productId: chosen[0] } : { productIds: chosen }),
      email: email.trim(),
      firstName: text(firstName),
      lastName: text(lastName),
      reason: reason.trim(),
      note: text(note),
      sendProductPurchaseEmails: sendEmails,
      ...(grantType === 'subscription' && accessUntil ? { accessUntil: new Date(accessUntil.replace(' ', 'T')).toISOString() } : {}),
      ...(grantType === 'existing_serial' && serialId ? { serialId: Number(serialId) } : {}),
    };
    // Fields left undefined are not sent (JSON has no undefined).
    grant.mutate(body);
  };
  const another = () => {
    grant.reset();
    setRequestId(crypto.randomUUID());
  };

  if (grant.isSuccess) {
    const answer = grant.data;
    return (
      <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Grant access">
        <Stack>
          <Alert color="green" title={`Access granted to ${answer.customer.email}`} role="status">
            {answer.createdCount} granted, {answer.skippedCount} already held{answer.emailsQueued > 0 ? `; ${answer.emailsQueued} e-mails on their way` : ''}.
          </Alert>
          <List size="sm">
            {answer.grants.map((g) => (
              <List.Item key={g.productId}>
                {answer.products.find((p) => p.id === g.productId)?.name ?? `Product ${g.productId}`}: {g.status === 'created' ? 'granted' : `skipped (${g.reason ?? 'already held'})`}
              </List.Item>
            ))}
          </List>
          <Text size="xs" c="dimmed">
            Grant request <Code>{answer.grantRequestId}</Code>, {formatDateTime(answer.purchases[0]?.purchased_at)}
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={another}>
              Grant another
            </Button>
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      </Modal>
    );
  }

  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened onClose={onClose} title="Grant access" size="lg">
      <form onSubmit={submit} noValidate>
        <Stack>
          <Text size="sm">Gives a customer a product without a payment. Nothing is charged, refunded or billed; products they already hold are skipped.</Text>
          <SegmentedControl aria-label="What to grant" data={GRANT_TYPES} value={grantType} onChange={(v) => setGrantType(v as GrantType)} />
          {single ? (
            <Select label="Product" required searchable data={products.options} value={productIds[0] ?? null} onChange={(v) => setProductIds(v ? [v] : [])} error={problem?.fieldError('productId')} />
          ) : (
            <MultiSelect label="Products" required searchable data={products.options} value={productIds} onChange={setProductIds} error={problem?.fieldError('productIds') ?? problem?.fieldError('productId')} />
          )}
          {grantType === 'subscription' && (
            <DateTimePicker label="Access until" description="Empty: one year from now. No recurring charge is authorised." clearable clearButtonProps={{ 'aria-label': 'Clear the end date' }} valueFormat="DD MMM YYYY HH:mm" value={accessUntil} onChange={setAccessUntil} error={problem?.fieldError('accessUntil')} />
          )}
          {grantType === 'existing_serial' && <AvailableSerial productId={productIds[0] ? Number(productIds[0]) : null} value={serialId} onChange={setSerialId} error={problem?.fieldError('serialId')} />}
          <TextInput label="Customer e-mail" description="An existing customer is found by it; otherwise one is created" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={problem?.fieldError('email')} />
          <SimpleGrid cols={2}>
            <TextInput label="First name" maxLength={100} value={firstName} onChange={(e) => setFirstName(e.currentTarget.value)} />
            <TextInput label="Last name" maxLength={100} value={lastName} onChange={(e) => setLastName(e.currentTarget.value)} />
          </SimpleGrid>
          <TextInput label="Reason" description="Kept with the grant for reconciliation" required maxLength={1000} value={reason} onChange={(e) => setReason(e.currentTarget.value)} error={problem?.fieldError('reason')} />
          <Textarea label="Note (optional)" maxLength={2000} autosize minRows={2} value={note} onChange={(e) => setNote(e.currentTarget.value)} />
          <Checkbox label="E-mail the customer their purchase (one e-mail per product)" checked={sendEmails} onChange={(e) => setSendEmails(e.currentTarget.checked)} />
          {grant.isError && <ProblemAlert error={grant.error} />}
          <Group justify="space-between">
            <Text size="xs" c="dimmed">
              Grant request <Code>{requestId}</Code>
            </Text>
            <Group>
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={grant.isPending}>
                Grant access
              </Button>
            </Group>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
