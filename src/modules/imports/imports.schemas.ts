import { Type, type Static } from '@sinclair/typebox';
import { Id } from '../../platform/http/bounded.js';

export const ImportIdParams = Type.Object({ importId: Id() }, { additionalProperties: false });

const RowErrorSchema = Type.Object(
  { row: Type.Integer(), field: Type.String(), code: Type.String(), message: Type.String() },
  { additionalProperties: true },
);

export const ImportResource = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    kind: Type.Union([Type.Literal('customers'), Type.Literal('serials'), Type.Literal('purchases')]),
    state: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed')]),
    totalRows: Type.Integer({ minimum: 0 }),
    processedRows: Type.Integer({ minimum: 0, description: 'Rows written so far; equals totalRows once finished' }),
    importedCount: Type.Union([Type.Integer(), Type.Null()], { description: 'Accepted rows, once finished' }),
    insertedCount: Type.Union([Type.Integer(), Type.Null()], { description: 'New records, once finished' }),
    failedCount: Type.Union([Type.Integer(), Type.Null()]),
    errors: Type.Array(RowErrorSchema, { description: 'Row errors (as in a 207 answer), once finished' }),
    failure: Type.Union([Type.String(), Type.Null()], { description: 'Why a failed import wrote nothing' }),
    createdAt: Type.String({ format: 'date-time' }),
    startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: true, description: 'An import queued with 202: poll it until state is succeeded or failed' },
);
export type ImportResource = Static<typeof ImportResource>;
