import { queryOptions } from '@tanstack/react-query';
import { api, ApiProblem, type Schemas, unwrap } from '../../api/client';

export type ImportKind = 'customers' | 'serials' | 'purchases';
export type ImportResult = Schemas['ImportResult'];
export type ImportResource = Schemas['ImportResource'];
export type RowError = ImportResult['errors'][number] | ImportResource['errors'][number];

/** What an import answered: every row done at once (201/207), or a job to poll (202). */
export type ImportAnswer = { kind: 'done'; status: 201 | 207; result: ImportResult } | { kind: 'queued'; importId: number };

/** Files above this size are sent with `Prefer: respond-async`: the server queues them and the page shows their progress. */
const ASYNC_ABOVE_BYTES = 512 * 1024;

interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

function post(kind: ImportKind, form: FormData, headers: Record<string, string>): Promise<Answer> {
  // The multipart form is the body; the typed client still checks the path and reads the answer.
  const init = { body: {}, bodySerializer: () => form, headers };
  if (kind === 'customers') return api.POST('/api/developer/customers/import', init);
  if (kind === 'serials') return api.POST('/api/developer/serials/import', init);
  return api.POST('/api/developer/purchases/import', init);
}

/** Uploads a CSV file to the kind's import route. A 422 (no valid row) or any other failure throws an ApiProblem. */
export async function sendImport(kind: ImportKind, file: File): Promise<ImportAnswer> {
  const form = new FormData();
  form.append('file', file, file.name);
  let answer: Answer;
  try {
    answer = await post(kind, form, file.size > ASYNC_ABOVE_BYTES ? { Prefer: 'respond-async' } : {});
  } catch (error) {
    throw ApiProblem.network(error);
  }
  const { response, data, error } = answer;
  if (error !== undefined || !response.ok) throw ApiProblem.fromAnswer(response, error);
  if (response.status === 202) return { kind: 'queued', importId: (data as ImportResource).id };
  return { kind: 'done', status: response.status === 207 ? 207 : 201, result: data as ImportResult };
}

/** A queued import, polled every second until it succeeded or failed. */
export const importQuery = (importId: number) =>
  queryOptions({
    queryKey: ['console', 'import', importId],
    queryFn: () => unwrap(api.GET('/api/developer/imports/{importId}', { params: { path: { importId } } })),
    refetchInterval: (query) => (query.state.data && (query.state.data.state === 'succeeded' || query.state.data.state === 'failed') ? false : 1_000),
    staleTime: 0,
  });

/** Row errors a 422 answer carries (`errors` with row numbers), so they show as the same table as a 207's. */
export function rowErrorsOf(problem: ApiProblem): RowError[] {
  const errors = problem.body.errors;
  if (!Array.isArray(errors)) return [];
  return errors.flatMap((e: unknown) => {
    const item = e as Partial<RowError> | null;
    return item && typeof item.row === 'number' && typeof item.message === 'string'
      ? [{ row: item.row, field: String(item.field ?? ''), code: String(item.code ?? ''), message: item.message } as RowError]
      : [];
  });
}

/** The kind's CSV template (`demo-csv`): the request, for saving it as a file or importing it as it is. */
export function templateRequest(kind: ImportKind) {
  const options = { parseAs: 'blob' as const };
  if (kind === 'customers') return api.GET('/api/developer/customers/demo-csv', options);
  if (kind === 'serials') return api.GET('/api/developer/serials/demo-csv', options);
  return api.GET('/api/developer/purchases/demo-csv', options);
}
