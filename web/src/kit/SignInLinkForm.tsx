import { Alert, Button, Stack, TextInput } from '@mantine/core';
import { IconMailCheck } from '@tabler/icons-react';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ApiProblem } from '../api/client';
import { ProblemAlert } from './ProblemAlert';

export interface SignInLinkFormProps {
  /** Asks the API to e-mail a one-time sign-in link to the address; answers the message to show. */
  send: (email: string) => Promise<{ message: string }>;
  /** Which address to give, under the field (each side of Patchbay knows its people by another address). */
  description: string;
  /** The address is known (an invitation names it): no field, the button sends to it. */
  email?: string;
  label?: string;
}

/**
 * The e-mail-link sign-in form of the console and both portals: one field, one button, and the same answer whether
 * or not the address is known (the API's answer says so). A field error from the API is shown on the field.
 */
export function SignInLinkForm({ send: request, description, email: fixedEmail, label = 'E-mail me a sign-in link' }: SignInLinkFormProps) {
  const [email, setEmail] = useState(fixedEmail ?? '');
  const send = useMutation({ mutationFn: request, meta: { anonymous: true } });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate(email.trim());
  };
  if (send.isSuccess) {
    return (
      <Alert color="green" icon={<IconMailCheck aria-hidden />} title="Check your inbox" role="status">
        {send.data.message} The link works once, for 15 minutes; open it in this browser.
      </Alert>
    );
  }
  const problem = send.error instanceof ApiProblem ? send.error : null;
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        {fixedEmail === undefined && (
          <TextInput
            label="E-mail address"
            description={description}
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            error={problem?.fieldError('email')}
          />
        )}
        {send.isError && !problem?.fieldError('email') && <ProblemAlert error={send.error} />}
        <Button type="submit" loading={send.isPending} w="fit-content">
          {label}
        </Button>
      </Stack>
    </form>
  );
}
