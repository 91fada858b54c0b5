import { Button, Checkbox, Group, MultiSelect, Stack, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ApiProblem } from '../../api/client';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { eventTypesQuery, type SubscribableEvent } from './queries';

export interface EndpointValues {
  url: string;
  description: string;
  events: SubscribableEvent[];
}

/** URL, description and the events an endpoint receives (every type, later ones too, or chosen types): for adding and for changing one. */
export function EndpointForm({
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  initial: EndpointValues;
  submitLabel: string;
  pending: boolean;
  error: Error | null;
  onSubmit: (values: EndpointValues) => void;
  onCancel: () => void;
}) {
  const types = useQuery(eventTypesQuery);
  const [url, setUrl] = useState(initial.url);
  const [description, setDescription] = useState(initial.description);
  const [every, setEvery] = useState(initial.events.includes('*'));
  const [chosen, setChosen] = useState<string[]>(initial.events.filter((e) => e !== '*'));
  const [missing, setMissing] = useState(false);
  const problem = error instanceof ApiProblem ? error : null;
  const options = (types.data ?? []).filter((t) => t.subscribable).map((t) => ({ value: t.type, label: `${t.type} — ${t.summary}` }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!every && chosen.length === 0) {
      setMissing(true);
      return;
    }
    onSubmit({ url: url.trim(), description: description.trim(), events: every ? ['*'] : (chosen as SubscribableEvent[]) });
  };
  const eventsError = (missing && !every && chosen.length === 0 ? 'Pick at least one event, or every event' : null) ?? problem?.fieldError('events');
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <TextInput
          label="URL"
          description="https; plain http only to hosts this deployment allows"
          required
          type="url"
          placeholder="https://hooks.example.com/patchbay"
          value={url}
          onChange={(e) => setUrl(e.currentTarget.value)}
          error={problem?.fieldError('url') ?? (problem?.code === 'WEBHOOK_URL_NOT_ALLOWED' ? problem.message : undefined)}
        />
        <TextInput label="Description" description="What receives it, say “accounting”" maxLength={500} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Checkbox label="Every event, including types added later" checked={every} onChange={(e) => setEvery(e.currentTarget.checked)} />
        {!every && (
          <MultiSelect
            label="Events"
            required
            searchable
            data={options}
            value={chosen}
            onChange={(value) => {
              setChosen(value);
              setMissing(false);
            }}
            placeholder={chosen.length === 0 ? 'Pick the events to send' : undefined}
            error={eventsError}
          />
        )}
        {error && !problem?.fieldError('url') && problem?.code !== 'WEBHOOK_URL_NOT_ALLOWED' && !problem?.fieldError('events') && <ProblemAlert error={error} />}
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
