import { Alert, Button, Code, CopyButton, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { formatDateTime } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { Section } from '../../kit/Section';
import { SegmentedField } from '../../kit/SegmentedField';
import { useProduct } from './ProductLayout';
import { type Environment, packageStatusQuery, restConfigQuery } from './queries';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="sm" c="dimmed" component="dt">
        {label}
      </Text>
      <Text component="dd" m={0} fw={500} style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Text>
    </div>
  );
}

export function EnvironmentSwitch({ value, onChange }: { value: Environment; onChange: (e: Environment) => void }) {
  return (
    <SegmentedField
      label="Environment"
      value={value}
      onChange={onChange}
      data={[
        { value: 'live', label: 'Live' },
        { value: 'test', label: 'Test' },
      ]}
    />
  );
}

/** The REST configuration and package credential status: previews only, because the API never returns a full key. */
export default function CredentialsPage() {
  const product = useProduct();
  const [params, setParams] = useListParams({ environment: 'live' });
  const environment: Environment = params.environment === 'test' ? 'test' : 'live';
  const rest = useQuery(restConfigQuery(product.id, environment));
  const status = useQuery(packageStatusQuery(product.id, environment));
  return (
    <Stack gap="lg">
      <EnvironmentSwitch value={environment} onChange={(e) => setParams({ environment: e })} />
      <Alert variant="light" color="blue" title="The product key is shown only as a preview">
        Patchbay never returns a product key in full, not even here: it is sealed at rest and goes only into plugin packages. Download a package to
        ship the key inside your plugin; regenerate one to rotate the key.
      </Alert>
      <Section id="rest" title="REST configuration">
        <QueryState query={rest} label="Loading the REST configuration">
          {(r) => (
            <Stack>
              {r.rotationRequired && (
                <Alert color="orange" title="The key must be rotated">
                  The saved key cannot be recovered (it was sealed under a key-encryption key this server no longer has). Regenerate the plugin package
                  to rotate it deliberately; nothing rotates by itself.
                </Alert>
              )}
              <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} component="dl" m={0}>
                <Fact label="Status">
                  <StatusBadge status={r.status} />
                </Fact>
                <Fact label="API base URL">
                  <Group gap="xs" wrap="nowrap">
                    <Code>{r.apiBaseUrl}</Code>
                    <CopyButton value={r.apiBaseUrl}>
                      {({ copied, copy }) => (
                        <Button size="compact-xs" variant="default" onClick={copy} aria-label={copied ? 'API base URL copied' : 'Copy the API base URL'}>
                          {copied ? 'Copied' : 'Copy'}
                        </Button>
                      )}
                    </CopyButton>
                  </Group>
                </Fact>
                <Fact label="App id">
                  <Code>{r.appId ?? '—'}</Code>
                </Fact>
                <Fact label="Product key (preview)">
                  <Code>{r.productKeyPreview ?? '—'}</Code>
                </Fact>
                <Fact label="REST API use">{r.apiStatus.replace(/_/g, ' ')}</Fact>
                <Fact label="Last request">{formatDateTime(r.lastRequestAt)}</Fact>
              </SimpleGrid>
            </Stack>
          )}
        </QueryState>
      </Section>
      <Section id="package-credential" title="Package credential status">
        <QueryState query={status} label="Loading the credential status">
          {(s) => (
            <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} component="dl" m={0}>
              <Fact label="Credential">{s.credentialStatus ? <StatusBadge status={s.credentialStatus.status} /> : '—'}</Fact>
              <Fact label="Key in use">{s.credentialStatus?.isActive ? 'Active' : 'Not active'}</Fact>
              <Fact label="Package">{s.packageReady ? 'Built with the key in use' : 'Not built with the key in use yet'}</Fact>
              <Fact label="Last generated">{formatDateTime(s.lastGeneratedAt)}</Fact>
              <Fact label="Last plugin connection">{formatDateTime(s.lastPluginConnectionAt)}</Fact>
              <Fact label="Experience modes">{s.supportedModes.join(', ')}</Fact>
            </SimpleGrid>
          )}
        </QueryState>
      </Section>
    </Stack>
  );
}
