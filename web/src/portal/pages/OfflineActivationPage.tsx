import { Alert, Button, FileInput, List, Paper, Select, Stack, Text, Title } from '@mantine/core';
import { IconDownload, IconFileCertificate, IconUpload } from '@tabler/icons-react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, ApiProblem, type paths, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { saveTextAsFile } from '../../kit/files';
import { formatDateTime } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { PageHeader } from '../../kit/PageHeader';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { type License, licensesQuery } from '../queries';
import { readMachineRequest, type MachineRequestPreview, sameSerial } from '../machine-request';

type Upload = paths['/api/customer-portal/licenses/{serialId}/offline-activations']['post']['requestBody']['content']['multipart/form-data'];

function LicenseFile({ result, onAgain }: { result: { license: string; filename: string; expiresAt: string; machine: string }; onAgain: () => void }) {
  return (
    <Paper withBorder p="md">
      <Stack>
        <Alert color="green" icon={<IconFileCertificate aria-hidden />} title="The license file is ready" role="status">
          For {result.machine}, valid until {formatDateTime(result.expiresAt)}. The computer now holds one of this license’s seats.
        </Alert>
        <Button leftSection={<IconDownload size={16} aria-hidden />} onClick={() => saveTextAsFile(result.license, result.filename)} w="fit-content">
          Download the license file
        </Button>
        <List size="sm" type="ordered" spacing={4}>
          <List.Item>Copy {result.filename} to the studio computer (a USB stick will do).</List.Item>
          <List.Item>Open it in the plugin’s license window: the plugin checks it without internet.</List.Item>
          <List.Item>When it runs out, make a new one here from a fresh request file: the computer keeps its seat.</List.Item>
        </List>
        <Button variant="subtle" onClick={onAgain} w="fit-content">
          Activate another computer
        </Button>
      </Stack>
    </Paper>
  );
}

function OfflineActivation({ licenses }: { licenses: License[] }) {
  const [params, setParams] = useListParams({ serial: '' });
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<MachineRequestPreview | null>(null);
  const license = licenses.find((l) => String(l.serial_id) === params.serial) ?? null;
  const activate = useMutation({
    mutationFn: async ({ serialId, chosen }: { serialId: number; chosen: File }) => {
      const form = new FormData();
      form.append('file', chosen, chosen.name);
      // The file's own bytes are sent as the multipart `file` and the server reads and checks them; `body`
      // only satisfies the generated type, which describes the file's content.
      const answer = await unwrap(
        api.POST('/api/customer-portal/licenses/{serialId}/offline-activations', {
          params: { path: { serialId } },
          body: { file: preview ?? {} } as Upload,
          bodySerializer: () => form,
        }),
      );
      return { ...answer, machine: answer.activation.machine_name ?? preview?.machineName ?? 'the computer' };
    },
  });

  const choose = async (chosen: File | null) => {
    setFile(chosen);
    activate.reset();
    const request = chosen ? await readMachineRequest(chosen) : null;
    setPreview(request);
    // The request names its license key: pick that license, so the buyer need not know which it is.
    const match = request?.serial ? licenses.find((l) => sameSerial(l.serial, request.serial!)) : undefined;
    if (match) setParams({ serial: String(match.serial_id) });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (license && file) activate.mutate({ serialId: license.serial_id, chosen: file });
  };

  if (activate.isSuccess) {
    return (
      <LicenseFile
        result={activate.data}
        onAgain={() => {
          activate.reset();
          setFile(null);
          setPreview(null);
        }}
      />
    );
  }
  const problem = activate.error instanceof ApiProblem ? activate.error : null;
  const fileError = problem?.fieldError('file');
  return (
    <Paper withBorder p="md" component="form" onSubmit={submit} noValidate>
      <Stack>
        <Title order={2} size="h4">
          Make a license file
        </Title>
        <List size="sm" type="ordered" spacing={4}>
          <List.Item>On the studio computer, open the plugin’s license window and save a machine request file.</List.Item>
          <List.Item>Bring the file to this computer and choose it below with the license it is for.</List.Item>
          <List.Item>Download the license file and open it in the plugin on the studio computer.</List.Item>
        </List>
        <FileInput
          label="Machine request file"
          description="The .patchbay-request file the plugin saved (a few hundred bytes)"
          placeholder="Choose the file"
          // The packages write `.patchbay-request`; a request copied under another name (.json, .txt) is still taken.
          accept=".patchbay-request,.json,application/json,text/plain"
          leftSection={<IconUpload size={16} aria-hidden />}
          value={file}
          onChange={(chosen) => void choose(chosen)}
          clearable
          clearButtonProps={{ 'aria-label': 'Remove the file' }}
          error={fileError}
        />
        {preview && (
          <Text size="sm">
            A request from <b>{preview.machineName ?? preview.machineId ?? 'an unnamed computer'}</b>
            {preview.serial ? ` for the key ${preview.serial}` : ''}.
          </Text>
        )}
        <Select
          label="License"
          placeholder="Choose a license"
          data={licenses.map((l) => ({ value: String(l.serial_id), label: `${l.product} · ${l.serial}` }))}
          value={params.serial || null}
          onChange={(value) => {
            activate.reset();
            setParams({ serial: value ?? '' });
          }}
          required
        />
        {license && (
          <Text size="sm" c="dimmed">
            {license.active_activation_count} of {license.max_activations} seats in use; the studio computer takes one (the same computer again keeps
            its seat).
          </Text>
        )}
        {activate.isError && <ProblemAlert error={activate.error} title={fileError ? 'This file is not a machine request' : undefined} />}
        <Button type="submit" disabled={!license || !file} loading={activate.isPending} w="fit-content">
          Create the license file
        </Button>
      </Stack>
    </Paper>
  );
}

/** Offline activation: the machine request file in, a signed license file for that computer out. */
export default function OfflineActivationPage() {
  const query = useQuery(licensesQuery);
  return (
    <>
      <PageHeader title="Offline activation" description="Activate a studio computer that has no internet, with a file carried over from it." />
      <QueryState query={query} label="Loading your licenses">
        {(licenses) => {
          const usable = licenses.filter((l) => l.status !== 'suspended' && l.status !== 'revoked');
          return usable.length === 0 ? (
            <EmptyState title="No license to activate">Offline activation needs a license key of this store. Keys you buy appear under Licenses and devices.</EmptyState>
          ) : (
            <OfflineActivation licenses={usable} />
          );
        }}
      </QueryState>
    </>
  );
}
