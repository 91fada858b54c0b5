import { Button, Checkbox, Fieldset, Group, MultiSelect, Radio, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ApiProblem, type paths } from '../../api/client';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { memberSessionQuery, type Permission, useMemberAccess } from '../member-access';
import { useProductOptions } from '../records/products';
import { permissionGroups } from './permissions';

export type Member = paths['/api/developer/members']['get']['responses'][200]['content']['application/json']['rows'][number];
export type MemberAccessBody = { permissions: Array<Permission | '*'>; products: 'all' | number[] };

/**
 * A teammate's access: the permissions of the catalogue the signed-in member holds (nobody grants
 * more than they have) and their products, all or chosen ones. `email` is asked for on invitation only.
 */
export function MemberForm({
  member,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  member?: Member;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (values: MemberAccessBody & { email: string }) => void;
  onCancel: () => void;
}) {
  const access = useMemberAccess();
  const session = useQuery(memberSessionQuery);
  const products = useProductOptions();
  const held = session.data?.workspace?.permissions ?? [];
  const [email, setEmail] = useState(member?.email ?? '');
  const [everything, setEverything] = useState(member?.permissions.includes('*') ?? false);
  const [permissions, setPermissions] = useState<string[]>(member?.permissions.filter((p) => p !== '*') ?? []);
  const [scope, setScope] = useState<'all' | 'chosen'>(member ? (member.products === 'all' ? 'all' : 'chosen') : access.allProducts ? 'all' : 'chosen');
  const [chosen, setChosen] = useState<string[]>(member && member.products !== 'all' ? member.products.map(String) : []);
  const problem = error instanceof ApiProblem ? error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit({
      email: email.trim(),
      permissions: everything ? ['*'] : (permissions as Permission[]),
      products: scope === 'all' ? 'all' : chosen.map(Number),
    });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        {!member && (
          <TextInput label="E-mail address" description="They get a sign-in link valid for 72 hours" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={problem?.fieldError('email')} />
        )}
        <Fieldset legend="Permissions">
          <Stack gap="sm">
            {access.owner && (
              <Checkbox
                label="Full access: every permission, including those added later"
                checked={everything}
                onChange={(e) => setEverything(e.currentTarget.checked)}
              />
            )}
            {!everything && (
              <Checkbox.Group value={permissions} onChange={setPermissions} error={problem?.fieldError('permissions')}>
                <SimpleGrid cols={{ base: 1, sm: 2 }}>
                  {permissionGroups(held).map((g) => (
                    <Stack key={g.group} gap={6}>
                      <Text fw={500} size="sm">
                        {g.group}
                      </Text>
                      {g.permissions.map((p) => (
                        <Checkbox key={p.name} value={p.name} label={p.label} description={p.name} />
                      ))}
                    </Stack>
                  ))}
                </SimpleGrid>
              </Checkbox.Group>
            )}
          </Stack>
        </Fieldset>
        <Fieldset legend="Products">
          <Stack gap="sm">
            <Radio.Group value={scope} onChange={(v) => setScope(v as 'all' | 'chosen')} aria-label="Which products">
              <Group>
                {access.allProducts && <Radio value="all" label="All products, including new ones" />}
                <Radio value="chosen" label="Only these products" />
              </Group>
            </Radio.Group>
            {scope === 'chosen' && (
              <MultiSelect label="Products" data={products.options} value={chosen} onChange={setChosen} searchable error={problem?.fieldError('products')} />
            )}
          </Stack>
        </Fieldset>
        {error != null && <ProblemAlert error={error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={pending}>
            {submitLabel}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
