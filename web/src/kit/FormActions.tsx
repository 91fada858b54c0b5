import { Button, Group } from '@mantine/core';
import { ProblemAlert } from './ProblemAlert';

/**
 * The end of a form: the API's problem with the last submit (next to what caused it), then Cancel
 * and the submit button, which shows the request running.
 */
export function FormActions({ error, submitLabel, pending, disabled, onCancel }: { error: unknown; submitLabel: string; pending: boolean; disabled?: boolean; onCancel?: () => void }) {
  return (
    <>
      {error ? <ProblemAlert error={error} /> : null}
      <Group justify="flex-end">
        {onCancel && (
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
        )}
        <Button type="submit" loading={pending} disabled={disabled}>
          {submitLabel}
        </Button>
      </Group>
    </>
  );
}
