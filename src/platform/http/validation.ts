import { setImmediate as nextTurn } from 'node:timers/promises';
import Ajv, { type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from './errors.js';

function makeAjv(options: Options) {
  const ajv = new Ajv.default({
    allErrors: false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    allowUnionTypes: true,
    // maxLength and minLength count code points: Ajv's default (its `unicode` option, deprecated
    // as an explicit setting and so left unset), which the API documents: 100 emoji fit a
    // 100-character field, as PostgreSQL counts them too. test/platform/input-hygiene.test.ts holds it.
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

function compileValidator(schema: unknown, httpPart: string | undefined): ValidateFunction {
  const ajv = httpPart === 'body' ? strictJson : coercing;
  const whole = ajv.compile(schema as object);
  return httpPart === 'body' ? (yieldingBodyValidator(ajv, schema as JsonSchema, whole) ?? whole) : whole;
}

/** Compiles a request part's validator, once; `pending` forgets it then. */
type Pending = Set<() => ValidateFunction>;

/** The validators not compiled yet of every open app (see compileAllValidators). */
const openValidatorRegistries = new Set<Pending>();

/**
 * Fastify's request validators, compiled by the first request that needs each instead of all in `ready()`.
 *
 * Compiling an Ajv validator for every route's params, query string and body was about a quarter of a second of the
 * server's start after the database was open (docs/performance.md, "Start-up") and of every test file's app. What is
 * compiled is the same, so requests are checked exactly as before: the first request of a route compiles its
 * validator, later ones reuse it (Ajv also keeps one compiled function per schema object). The wrapper forwards what
 * Fastify reads from an Ajv function (`schemaEnv`, to pass the parent for root coercion; `errors` after a failed
 * check). `compileAllValidators` compiles what is left, so a test still fails on a schema that cannot compile. One
 * registry per app (`close` when the app closes), as for the response serializers.
 */
export function lazyValidatorRegistry(): { compiler: FastifySchemaCompiler<unknown>; close(): void } {
  const pending: Pending = new Set();
  openValidatorRegistries.add(pending);
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    let compiled: ValidateFunction | undefined;
    const compile = (): ValidateFunction => {
      if (!compiled) {
        compiled = compileValidator(schema, httpPart);
        pending.delete(compile);
      }
      return compiled;
    };
    pending.add(compile);
    const validate = (data: unknown, context?: Parameters<ValidateFunction>[1]) => compile()(data, context);
    Object.defineProperties(validate, {
      schemaEnv: { get: () => compile().schemaEnv },
      errors: { get: () => compile().errors },
    });
    return validate as ReturnType<FastifySchemaCompiler<unknown>>;
  };
  return {
    compiler,
    close: () => {
      openValidatorRegistries.delete(pending);
      pending.clear();
    },
  };
}

/** Compiles every request validator of the open apps not compiled yet; throws the first schema's error. For tests. */
export function compileAllValidators(): number {
  const entries = [...openValidatorRegistries].flatMap((pending) => [...pending]);
  for (const compile of entries) compile();
  return entries.length;
}

/** What Ajv says about a failed check, as much as the answers use. */
export interface ValidationItem {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Ajv's errors as the answer's `errors`: each path under `context` (`body`, `querystring`, …), naming a missing or unknown field. */
export function fieldErrors(items: readonly ValidationItem[], context: string): FieldError[] {
  return items.map((v) => {
    let path = v.instancePath ?? '';
    const missing = v.params?.missingProperty;
    const additional = v.params?.additionalProperty;
    if (typeof missing === 'string') path += `/${missing}`;
    if (typeof additional === 'string') path += `/${additional}`;
    const message = typeof additional === 'string' ? `unknown parameter "${additional}"` : (v.message ?? 'is invalid');
    return { path: `${context}${path}`, message };
  });
}

/**
 * Checks JSON that a handler validates itself (the checkout webhook checks an event's `data` by
 * the event's type) by the rules every request body gets: the same Ajv, lengths in code points,
 * no coercion. Errors name fields under `context`, as a route's own validation would.
 */
export function jsonValidator<T extends TSchema>(schema: T, context: string) {
  const validate = strictJson.compile(schema);
  return (value: unknown): { ok: true; value: Static<T> } | { ok: false; errors: FieldError[] } =>
    validate(value) ? { ok: true, value: value as Static<T> } : { ok: false, errors: fieldErrors(validate.errors ?? [], context) };
}

type JsonSchema = { type?: unknown; properties?: Record<string, JsonSchema>; items?: unknown };

/** Arrays longer than this are checked a slice at a time. */
export const YIELDING_VALIDATION_ITEMS = 2_000;
const SLICE_ITEMS = 1_000;

/**
 * A body with a long top-level array (an import of up to 100,000 rows) is validated a slice of
 * items at a time, letting other requests run in between, instead of in one block of the event
 * loop: first the body with the arrays' items unchecked, then the items. Fastify awaits a
 * validator that answers with a promise. Other bodies are validated at once, as before.
 */
function yieldingBodyValidator(ajv: InstanceType<typeof Ajv.default>, schema: JsonSchema, whole: ValidateFunction): ValidateFunction | null {
  const arrays = Object.entries(schema.properties ?? {}).filter(([, inner]) => inner.type === 'array' && typeof inner.items === 'object');
  if (arrays.length === 0) return null;
  let envelope: ValidateFunction;
  let items: Array<[string, ValidateFunction]>;
  try {
    const properties = { ...schema.properties };
    for (const [name, inner] of arrays) properties[name] = { ...inner, items: true };
    envelope = ajv.compile({ ...schema, properties });
    items = arrays.map(([name, inner]) => [name, ajv.compile(inner.items as object)]);
  } catch {
    // Items that refer to the rest of the schema cannot be compiled alone: validate in one piece.
    return null;
  }
  const validate = ((data: unknown) => {
    const body = data as Record<string, unknown> | null;
    const long = body !== null && typeof body === 'object' && arrays.some(([name]) => Array.isArray(body[name]) && (body[name] as unknown[]).length > YIELDING_VALIDATION_ITEMS);
    if (!long) {
      const valid = whole(data);
      validate.errors = whole.errors;
      return valid;
    }
    return (async () => {
      if (!envelope(data)) {
        validate.errors = envelope.errors;
        return false;
      }
      for (const [name, validateItem] of items) {
        const list = body[name];
        if (!Array.isArray(list)) continue;
        for (let i = 0; i < list.length; i += 1) {
          if (i > 0 && i % SLICE_ITEMS === 0) await nextTurn();
          if (!validateItem(list[i], { instancePath: `/${name}/${i}`, parentData: list, parentDataProperty: i, rootData: body, dynamicAnchors: {} })) {
            validate.errors = validateItem.errors;
            return false;
          }
        }
      }
      validate.errors = null;
      return true;
    })();
  }) as ValidateFunction;
  return validate;
}
