import { Alert, Button, Code, FileButton, Group, Modal, Select, Stack, Text, Textarea } from '@mantine/core';
import { IconFileImport } from '@tabler/icons-react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type paths, unwrap } from '../../api/client';
import { EmptyState } from '../../kit/EmptyState';
import { formatDate } from '../../kit/format';
import { useListParams } from '../../kit/list-params';
import { notify } from '../../kit/notify';
import { type Column, PagedTable } from '../../kit/PagedTable';
import { ProblemAlert } from '../../kit/ProblemAlert';
import { QueryState } from '../../kit/QueryState';
import { StatusBadge } from '../../kit/StatusBadge';
import { useMemberAccess } from '../member-access';
import { useProduct } from './ProductLayout';
import { productKeys, type Review } from './queries';

const PAGE_SIZE = 20;
type ReviewStatus = Review['status'];
type ImportBody = NonNullable<paths['/api/developer/products/{productId}/reviews/import']['post']['requestBody']>['content']['application/json'];

const STATUSES: Array<{ value: ReviewStatus; label: string; action: string }> = [
  { value: 'published', label: 'Published', action: 'Publish' },
  { value: 'pending', label: 'Held for moderation', action: 'Hold' },
  { value: 'hidden', label: 'Hidden', action: 'Hide' },
];

function Moderate({ productId, review }: { productId: number; review: Review }) {
  const client = useQueryClient();
  const moderate = useMutation({
    mutationFn: (status: ReviewStatus) =>
      unwrap(api.POST('/api/developer/products/{productId}/reviews/{reviewId}/status', { params: { path: { productId, reviewId: review.id } }, body: { status } })),
    onSuccess: async (saved) => {
      notify(`The review is ${saved.status === 'pending' ? 'held' : saved.status}.`);
      await client.invalidateQueries({ queryKey: productKeys.one(productId) });
    },
  });
  return (
    <Stack gap={4}>
      <Group gap={4} wrap="nowrap">
        {STATUSES.filter((s) => s.value !== review.status).map((s) => (
          <Button
            key={s.value}
            size="xs"
            variant="default"
            loading={moderate.isPending && moderate.variables === s.value}
            onClick={() => moderate.mutate(s.value)}
            aria-label={`${s.action} the review “${review.title || review.id}”`}
          >
            {s.action}
          </Button>
        ))}
      </Group>
      {moderate.isError && <ProblemAlert error={moderate.error} />}
    </Stack>
  );
}

const EXAMPLE = `[
  { "rating": 5, "title": "Lush pads", "body": "…", "customerEmail": "ann@example.com", "externalId": "shop-1001" }
]`;

function ImportReviews({ productId, onClose }: { productId: number; onClose: () => void }) {
  const client = useQueryClient();
  const [text, setText] = useState('');
  const [local, setLocal] = useState<string | null>(null);
  const run = useMutation({
    mutationFn: (reviews: ImportBody['reviews']) => unwrap(api.POST('/api/developer/products/{productId}/reviews/import', { params: { path: { productId } }, body: { reviews } })),
    onSuccess: async (result) => {
      notify(`${result.insertedCount} new reviews imported (${result.importedCount} received).`, 'green');
      await client.invalidateQueries({ queryKey: productKeys.one(productId) });
      onClose();
    },
  });
  const submit = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return setLocal('This is not JSON: paste an array of reviews like the example.');
    }
    const reviews = Array.isArray(parsed) ? parsed : (parsed as { reviews?: unknown })?.reviews;
    if (!Array.isArray(reviews) || reviews.length === 0) return setLocal('Paste an array with at least one review.');
    setLocal(null);
    // The server checks every field and names the ones it refuses.
    run.mutate(reviews as ImportBody['reviews']);
  };
  return (
    <Stack>
      <Text size="sm">
        Reviews from another shop, as JSON: each with a <Code>rating</Code> (1–5) and optionally title, body, status, customerName, customerEmail, verified,
        createdAt. An <Code>externalId</Code> makes a repeated import add nothing twice. Up to 5,000 at once.
      </Text>
      <Textarea label="Reviews (JSON)" autosize minRows={6} maxRows={16} placeholder={EXAMPLE} value={text} onChange={(e) => setText(e.currentTarget.value)} error={local} styles={{ input: { fontFamily: 'monospace' } }} />
      <Group>
        <FileButton accept="application/json,.json" onChange={(file) => file && void file.text().then(setText)}>
          {(props) => (
            <Button variant="default" {...props}>
              Read from a .json file
            </Button>
          )}
        </FileButton>
      </Group>
      {run.isError && <ProblemAlert error={run.error} />}
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose}>
          Cancel
        </Button>
        <Button loading={run.isPending} disabled={!text.trim()} onClick={submit}>
          Import the reviews
        </Button>
      </Group>
    </Stack>
  );
}

/** Reviews of the product, paged on the server with the status filter in the URL; moderation and import for reviews.manage. */
export default function ReviewsPage() {
  const product = useProduct();
  const mayManage = useMemberAccess().can('reviews.manage');
  const [params, setParams] = useListParams({ status: '', page: 1 });
  const [importing, setImporting] = useState(false);
  const query = useQuery({
    queryKey: [...productKeys.one(product.id), 'reviews', params],
    queryFn: () =>
      unwrap(
        api.GET('/api/developer/products/{productId}/reviews', {
          params: { path: { productId: product.id }, query: { page: params.page, limit: PAGE_SIZE, ...(params.status ? { status: params.status as ReviewStatus } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const columns: Column<Review>[] = [
    { key: 'rating', header: 'Rating', render: (r) => `${r.rating} ★`, numeric: true },
    {
      key: 'review',
      header: 'Review',
      render: (r) => (
        <Stack gap={0} maw={420}>
          <Text fw={500}>{r.title || '(no title)'}</Text>
          <Text size="sm" lineClamp={3}>
            {r.body}
          </Text>
        </Stack>
      ),
    },
    {
      key: 'by',
      header: 'Reviewer',
      render: (r) => (
        <Stack gap={0}>
          <Text size="sm">{r.customerName ?? r.customerEmail ?? 'Anonymous'}</Text>
          <Text size="xs" c="dimmed">
            {[r.verifiedPurchase ? 'verified purchase' : null, r.imported ? 'imported' : null].filter(Boolean).join(', ')}
          </Text>
        </Stack>
      ),
    },
    { key: 'date', header: 'Date', render: (r) => formatDate(r.createdAt) },
    { key: 'status', header: 'Status', render: (r) => <StatusBadge status={r.status} /> },
    ...(mayManage ? [{ key: 'moderate', header: 'Moderation', render: (r: Review) => <Moderate productId={product.id} review={r} /> }] : []),
  ];
  return (
    <Stack>
      <Group justify="space-between" align="flex-end">
        <Select
          label="Status"
          data={[{ value: '', label: 'All statuses' }, ...STATUSES.map((s) => ({ value: s.value, label: s.label }))]}
          value={params.status}
          onChange={(value) => setParams({ status: value ?? '' })}
          allowDeselect={false}
          w={240}
        />
        {mayManage && (
          <Button variant="default" leftSection={<IconFileImport size={16} aria-hidden />} onClick={() => setImporting(true)}>
            Import reviews
          </Button>
        )}
      </Group>
      <QueryState query={query} label="Loading the reviews">
        {(data) => (
          <PagedTable
            caption={`${data.total} reviews`}
            columns={columns}
            rows={data.rows}
            rowKey={(r) => r.id}
            total={data.total}
            page={params.page}
            pageSize={PAGE_SIZE}
            onPage={(page) => setParams({ page })}
            empty={
              params.status ? (
                <EmptyState title="No review has this status">Choose “All statuses” to see every review.</EmptyState>
              ) : (
                <EmptyState title="No reviews yet">
                  Buyers’ reviews appear here{mayManage ? '; reviews from another shop can be imported with “Import reviews”' : ''}.
                </EmptyState>
              )
            }
          />
        )}
      </QueryState>
      {!mayManage && (
        <Alert variant="light" color="gray">
          Moderation needs the reviews.manage permission.
        </Alert>
      )}
      <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={importing} onClose={() => setImporting(false)} title="Import reviews" size="lg">
        {importing && <ImportReviews productId={product.id} onClose={() => setImporting(false)} />}
      </Modal>
    </Stack>
  );
}
