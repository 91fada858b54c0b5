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
  return ajv;
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
