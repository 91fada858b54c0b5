import { type Static, Type } from '@sinclair/typebox';
import { ROW_ERROR_CODES, type RowErrorCode } from './errors.js';

/** The answer of an import that ran (201 / 207), whatever it imports. */
export const ImportResult = Type.Object(
  {
    success: Type.Boolean({ description: 'true when every row was accepted' }),
    importedCount: Type.Integer({ description: 'Rows accepted (including rows that matched an existing customer)' }),
    insertedCount: Type.Integer({ description: 'Customer relationships newly created (or re-created after removal)' }),
    failedCount: Type.Integer(),
    errors: Type.Array(
      Type.Object(
        {
          row: Type.Integer(),
          field: Type.String(),
          code: Type.Union(Object.keys(ROW_ERROR_CODES).map((c) => Type.Literal(c as RowErrorCode)), { description: 'A row error code (see the README)' }),
          message: Type.String(),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
export type ImportResult = Static<typeof ImportResult>;
