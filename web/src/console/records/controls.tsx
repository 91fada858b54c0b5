import { Button, TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { IconDownload, IconSearch, IconUpload } from '@tabler/icons-react';
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { notify } from '../../kit/notify';
import { ProblemAlert } from '../../kit/ProblemAlert';

/**
 * How long typing must pause before a search box asks the server: long enough that a steady typist sends one
 * request per word, short enough that a search shows its rows within 500 ms of the last key at 1,000,000 customers
 * (issue 21's goal; at 300 ms the pause alone took most of it: docs/performance.md, console).
 */
export const SEARCH_PAUSE_MS = 200;

/** A search box whose text reaches the URL (and so the query) once typing pauses. */
export function SearchField({ label, description, value, onSearch }: { label: string; description?: string; value: string; onSearch: (text: string) => void }) {
  const [text, setText] = useState(value);
  // The back button changes the URL under the box: show what the list is searching for.
  useEffect(() => setText(value), [value]);
  const apply = useDebouncedCallback((next: string) => onSearch(next.trim()), SEARCH_PAUSE_MS);
  return (
    <TextInput
      label={label}
      description={description}
      type="search"
      leftSection={<IconSearch size={16} aria-hidden />}
      value={text}
      onChange={(e) => {
        setText(e.currentTarget.value);
        apply(e.currentTarget.value);
      }}
      w={280}
    />
  );
}

/** Exports every row the filters match (not one page) as a CSV file; a failure shows under the button. */
export function ExportButton({ label, run }: { label: string; run: () => Promise<void> }) {
  const exporting = useMutation({ mutationFn: run, onSuccess: () => notify('The export is downloaded.', 'green') });
  return (
    <>
      <Button variant="default" leftSection={<IconDownload size={16} aria-hidden />} loading={exporting.isPending} onClick={() => exporting.mutate()}>
        {label}
      </Button>
      {exporting.isError && <ProblemAlert error={exporting.error} title="The export failed" />}
    </>
  );
}

export function ImportButton({ onClick }: { onClick: () => void }) {
  return (
    <Button variant="default" leftSection={<IconUpload size={16} aria-hidden />} onClick={onClick}>
      Import
    </Button>
  );
}

/** A date window of the shared list parameter `dateRange`. */
export const DATE_RANGES = [
  { value: '', label: 'Any time' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
  { value: '365d', label: 'Last 365 days' },
];

/** A list parameter that names an id: the number, or undefined when absent or not a positive integer. */
export const idParam = (text: string): number | undefined => {
  const n = Number(text);
  return text !== '' && Number.isInteger(n) && n > 0 ? n : undefined;
};
