/**
 * Stable `operationId`s: generated clients name their functions and types after them, so an id
 * must not change when code moves. A table (`src/openapi.ts`) pins the id of every operation that
 * exists; a route added later gets one from the rule below until it is pinned there too.
 */

const VERB_ON_ITEM: Record<string, string> = { GET: 'get', PATCH: 'update', PUT: 'replace', DELETE: 'delete', POST: 'create' };
const VERB_ON_COLLECTION: Record<string, string> = { GET: 'list', POST: 'create', PATCH: 'update', PUT: 'replace', DELETE: 'delete' };

/** API families: the path prefix and the namespace its ids start with ('' = the first segment). */
const FAMILIES: Array<[RegExp, string]> = [
  [/^\/api\/developer\//, ''],
  [/^\/api\/licensing\/v\d+\//, 'licensing'],
  [/^\/api\/partner-portal\//, 'partnerPortal'],
  [/^\/api\//, ''],
  [/^\//, ''],
];

const camel = (segment: string) => segment.replace(/[-_.]+([a-z0-9])/gi, (_m, c: string) => c.toUpperCase());

/**
 * The id a route gets from its method and OpenAPI path, e.g. `GET /api/developer/customers` →
 * `customers.list`, `GET …/customers/{customerId}` → `customers.get`, `POST …/serials/generate` →
 * `serials.generate`, `DELETE …/serials/{serialId}/activations/{activationId}` →
 * `serials.activations.delete`. Path parameters are left out; the last segment says the verb.
 */
export function deriveOperationId(method: string, path: string): string {
  const upper = method.toUpperCase();
  const [prefix, namespace] = FAMILIES.find(([pattern]) => pattern.test(path)) ?? [/^/, ''];
  const segments = path.replace(prefix, '').split('/').filter(Boolean);
  const statics = segments.filter((s) => !s.startsWith('{')).map(camel);
  const endsWithParam = segments.at(-1)?.startsWith('{') ?? false;
  // A family without a namespace of its own is named by its first segment (`customers`).
  const collection = namespace === '' ? statics.length <= 1 : statics.length === 0;
  let verb = '';
  if (endsWithParam) verb = VERB_ON_ITEM[upper] ?? upper.toLowerCase();
  else if (collection) verb = VERB_ON_COLLECTION[upper] ?? upper.toLowerCase();
  else if (upper === 'DELETE') verb = 'delete';
  return [namespace, ...statics, verb].filter(Boolean).join('.');
}

export interface OperationRef {
  method: string;
  path: string;
}

/**
 * Ids for every operation: the table's, else the derived one. A derived id that another
 * operation already has gets the method's verb (`products.files` for GET, `products.files.create`
 * for POST); what still collides is left for the uniqueness test to report.
 */
export function assignOperationIds(operations: OperationRef[], table: Readonly<Record<string, string>>): Map<string, string> {
  const ids = new Map<string, string>();
  const taken = new Set<string>();
  const key = (op: OperationRef) => `${op.method.toUpperCase()} ${op.path}`;
  for (const op of operations) {
    const pinned = table[key(op)];
    if (pinned) {
      ids.set(key(op), pinned);
      taken.add(pinned);
    }
  }
  // GETs first, so a read keeps the plain name and a write on the same path gets the verb.
  const rest = operations.filter((op) => !ids.has(key(op))).sort((a, b) => Number(a.method.toUpperCase() !== 'GET') - Number(b.method.toUpperCase() !== 'GET'));
  for (const op of rest) {
    let id = deriveOperationId(op.method, op.path);
    if (taken.has(id)) id = `${id}.${VERB_ON_COLLECTION[op.method.toUpperCase()] ?? op.method.toLowerCase()}`;
    ids.set(key(op), id);
    taken.add(id);
  }
  return ids;
}
