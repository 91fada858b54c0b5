import { Type, type TSchema } from '@sinclair/typebox';
import { Id, Int, Text } from './bounded.js';

export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: "PUBLIC_BASE_URL/docs/errors#CODE: the code's entry in this deployment's error catalogue" }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable UPPER_SNAKE error code; every code is listed at /docs/errors (docs/errors.md)' }),
    requestId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details' },
);

export const PagingQuery = {
  page: Type.Optional(Int(1, 1_000_000, { default: 1 })),
  limit: Type.Optional(Int(1, MAX_PAGE_SIZE, { default: DEFAULT_PAGE_SIZE, description: `Page size, at most ${MAX_PAGE_SIZE}` })),
};

export const DATE_RANGE_PATTERN = '^(7d|30d|90d|365d|all|(\\d{4}-\\d{2}-\\d{2})?\\.\\.(\\d{4}-\\d{2}-\\d{2})?)$';

/** Shared list parameters of section 4.1. */
export const ListQuery = {
  ...PagingQuery,
  search: Type.Optional(Text(200, { description: 'Case-insensitive substring' })),
  dateRange: Type.Optional(
    // The longest form is two dates and the two dots between them.
    Text(22, {
      pattern: DATE_RANGE_PATTERN,
      description:
        'Creation-date window: 7d, 30d, 90d, 365d, all, or an inclusive UTC range YYYY-MM-DD..YYYY-MM-DD (either side may be empty)',
    }),
  ),
  productId: Type.Optional(Id()),
};

export function ListEnvelope<T extends TSchema>(row: T, extra: Record<string, TSchema> = {}) {
  return Type.Object(
    {
      rows: Type.Array(row),
      total: Type.Integer({ minimum: 0 }),
      page: Type.Integer({ minimum: 1 }),
      pageSize: Type.Integer({ minimum: 1 }),
      ...extra,
    },
    { additionalProperties: true },
  );
}

export const IdParam = (name: string) =>
  Type.Object({ [name]: Id() }, { additionalProperties: false });

/** Standard error responses for OpenAPI, keyed by status. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, unknown> = {};
  for (const status of statuses) out[status] = Type.Ref('Problem');
  return out;
}
