import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(options: Options) {
  const ajv = new Ajv.default({
    allErrors: false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    allowUnionTypes: true,
    ...options,
  });
  addFormats.default(ajv);
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean };
  ajv.addFormat('date-time', { type: 'string', validate: storableDateTime(rfc3339.validate) });
  return ajv;
}

/**
 * RFC 3339 also allows instants that PostgreSQL's timestamptz refuses (year 0000, offsets beyond
 * ±15:59) or that come back outside the years 0001-9999, which a JavaScript date cannot print:
 * they are refused with a 400 naming the field instead of failing in the database or the answer.
 */
function storableDateTime(rfc3339: (value: string) => boolean) {
  return (value: string): boolean => {
    if (!rfc3339(value)) return false;
    const offset = /([+-])(\d{2}):\d{2}$/.exec(value);
    if (offset && Number(offset[2]) > 15) return false;
    // A leap second is checked as the second before it (Date.parse does not know it).
    const time = Date.parse(value.replace(/(\d{2}:\d{2}):60/, '$1:59'));
    if (!Number.isFinite(time)) return false;
    const year = new Date(time).getUTCFullYear();
    return year >= 1 && year <= 9999;
  };
}

/**
 * Query strings, params and headers arrive as text, so they are coerced; JSON
 * bodies are not (`"true"` is not a boolean). Unknown query parameters fail
 * because list query schemas set additionalProperties: false.
 */
const coercing = makeAjv({ coerceTypes: 'array' });
const strictJson = makeAjv({ coerceTypes: false });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictJson : coercing;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};
