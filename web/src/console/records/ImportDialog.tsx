import { Alert, Button, Code, FileInput, Group, Modal, Stack, Text } from '@mantine/core';
import { IconDownload, IconFileTypeCsv, IconUpload } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ApiProblem, isProblem, unwrap } from '../../api/client';
import { formatCount } from '../../kit/format';
import { notify } from '../../kit/notify';
import { OperationProgress } from '../../kit/OperationProgress';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { datedName, saveDownload } from './download';
import { type ImportAnswer, type ImportKind, importQuery, type RowError, rowErrorsOf, sendImport, templateRequest } from './imports';

const ERRORS_PER_PAGE = 20;

const errorColumns: Column<RowError>[] = [
  { key: 'row', header: 'Row', render: (e) => formatCount(e.row), numeric: true },
  { key: 'field', header: 'Column', render: (e) => (e.field ? <Code>{e.field}</Code> : '—') },
  { key: 'message', header: 'Problem', render: (e) => e.message },
  { key: 'code', header: 'Code', render: (e) => <Code>{e.code}</Code> },
];

/** The rows an import refused, as a table to fix them by (row numbers count data rows from 1, as in a spreadsheet below its header). */
export function RowErrorsTable({ errors }: { errors: RowError[] }) {
  const [page, setPage] = useState(1);
  return (
    <PagedTable
      caption={`Rows to fix (${formatCount(errors.length)})`}
      columns={errorColumns}
      rows={errors.slice((page - 1) * ERRORS_PER_PAGE, page * ERRORS_PER_PAGE)}
      rowKey={(e) => `${e.row}:${e.field}:${e.code}`}
      total={errors.length}
      page={page}
      pageSize={ERRORS_PER_PAGE}
      onPage={setPage}
      empty={null}
    />
  );
}

interface Counts {
  imported: number;
  inserted: number;
  failed: number;
  errors: RowError[];
}

function Outcome({ counts, noun }: { counts: Counts; noun: string }) {
  if (counts.failed === 0) {
    return (
      <Alert color="green" title="Import finished" role="status">
        {formatCount(counts.imported)} {noun} imported ({formatCount(counts.inserted)} new).
      </Alert>
    );
  }
  return (
    <Stack gap="sm">
      <Alert color="yellow" title={counts.failed === 1 ? '1 row needs fixing' : `${formatCount(counts.failed)} rows need fixing`} role="status">
        {formatCount(counts.imported)} {noun} were imported ({formatCount(counts.inserted)} new) and are saved. Correct the rows below in your file and
        import only those rows again.
      </Alert>
      <RowErrorsTable errors={counts.errors} />
    </Stack>
  );
}

/** A queued import's progress, polled from its import resource, then its outcome. */
function QueuedImport({ importId, noun, onFinished }: { importId: number; noun: string; onFinished: () => void }) {
  const resource = useQuery(importQuery(importId));
  const data = resource.data;
  const finished = data?.state === 'succeeded' || data?.state === 'failed';
  useEffect(() => {
    if (finished) onFinished();
    // Once per import: the callback's identity changes with every render of the dialog.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [finished]);
  if (resource.isError) return <ProblemAlert error={resource.error} onRetry={() => void resource.refetch()} />;
  return (
    <Stack gap="sm">
      <OperationProgress label="Import progress" state={{ status: data?.state ?? 'queued', processed: data?.processedRows ?? 0, total: data?.totalRows ?? null }} />
      {data?.state === 'failed' && (
        <Alert color="red" title="The import failed; nothing was written">
          {data.failure}
        </Alert>
      )}
      {data?.state === 'succeeded' && (
        <Outcome counts={{ imported: data.importedCount ?? 0, inserted: data.insertedCount ?? 0, failed: data.failedCount ?? 0, errors: data.errors }} noun={noun} />
      )}
    </Stack>
  );
}

/**
 * Importing a CSV (the kind's template columns): upload a file or the demo template. A small file
 * answers at once (every row, or the saved rows and a table of the rows to fix); a large one is
 * queued and its progress shown until it finishes. `onImported` refreshes the list behind.
 */
export function ImportDialog({ kind, noun, opened, onClose, onImported }: { kind: ImportKind; noun: string; opened: boolean; onClose: () => void; onImported: () => void }) {
  const client = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const upload = useMutation({
    mutationFn: (chosen: File) => sendImport(kind, chosen),
    onSuccess: (answer: ImportAnswer) => {
      if (answer.kind === 'done') onImported();
    },
  });
  const template = useMutation({ mutationFn: () => saveDownload(templateRequest(kind), `${kind}-template.csv`) });
  const demo = useMutation({
    mutationFn: async () => {
      const blob = (await unwrap(templateRequest(kind))) as Blob;
      upload.mutate(new File([blob], datedName(`${kind}-demo`), { type: 'text/csv' }));
    },
  });
  const close = () => {
    if (upload.data?.kind === 'queued') void client.invalidateQueries({ queryKey: importQuery(upload.data.importId).queryKey });
    upload.reset();
    setFile(null);
    onClose();
  };
  const failure = upload.error ?? demo.error ?? template.error;
  const refused = isProblem(failure) ? rowErrorsOf(failure) : [];
  const title = `Import ${noun}`;
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={close} title={title} size="xl">
      <Stack>
        <Text size="sm">
          Upload a CSV file with the template’s columns. Rows that can be imported are saved; the others are listed with their problem, so you fix and
          send only those.
        </Text>
        <FileInput
          label="CSV file"
          accept=".csv,text/csv"
          clearable
          clearButtonProps={{ 'aria-label': 'Clear the chosen file' }}
          leftSection={<IconFileTypeCsv size={16} aria-hidden />}
          value={file}
          onChange={(chosen) => {
            setFile(chosen);
            upload.reset();
          }}
        />
        <Group>
          <Button leftSection={<IconUpload size={16} aria-hidden />} disabled={!file} loading={upload.isPending} onClick={() => file && upload.mutate(file)}>
            Import the file
          </Button>
          <Button variant="default" loading={demo.isPending} disabled={upload.isPending} onClick={() => demo.mutate()}>
            Import the demo template
          </Button>
          <Button variant="subtle" leftSection={<IconDownload size={16} aria-hidden />} loading={template.isPending} onClick={() => template.mutate()}>
            Download the template
          </Button>
        </Group>
        {failure && (
          <Stack gap="sm">
            <ProblemAlert
              error={failure instanceof ApiProblem && refused.length > 0 ? new ApiProblem(failure.status, failure.code, failure.title, failure.detail, [], failure.requestId, failure.body) : failure}
              title={refused.length > 0 ? 'No row could be imported; nothing was written' : undefined}
            />
            {refused.length > 0 && <RowErrorsTable errors={refused} />}
          </Stack>
        )}
        {upload.data?.kind === 'done' && (
          <Outcome counts={{ imported: upload.data.result.importedCount, inserted: upload.data.result.insertedCount, failed: upload.data.result.failedCount, errors: upload.data.result.errors }} noun={noun} />
        )}
        {upload.data?.kind === 'queued' && (
          <QueuedImport
            importId={upload.data.importId}
            noun={noun}
            onFinished={() => {
              notify(`The ${noun} import finished.`);
              onImported();
            }}
          />
        )}
      </Stack>
    </Modal>
  );
}
