import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Server-side prepared statements for the statements a process runs again and again (PostgreSQL only).
 *
 * Kysely hands `pg` each statement as text and values, which `pg` sends unnamed: PostgreSQL parses, analyses and
 * plans it on every execution. For a list page that is about as much work as running it (`pgbench` on the customer
 * list at 1,000,000 rows: 2,035 executions/s unnamed, 3,559 prepared; docs/performance-lists.md). Here a
 * statement's text, once it has run `PREPARE_AFTER_USES` times in this process, gets a name derived from its text,
 * so each connection parses it once and PostgreSQL's plan cache decides per statement whether a generic plan serves
 * (`plan_cache_mode = auto`: five custom plans first, then the generic one only where it is not costlier). That is
 * what pgJDBC (`prepareThreshold=5`) and Npgsql (automatic preparation) do by default.
 *
 * - Only statements with parameters: a text without any (`begin`, `select 1`) goes the simple protocol as before.
 * - At most `PREPARED_PER_CONNECTION` names per connection, so statements whose text varies without end (an
 *   insert of n rows) cannot grow a backend's memory: past the limit, new texts run unnamed.
 * - A text's name is a hash of the text, so the same text has the same name on every connection and two texts
 *   never share one.
 * - Poolers that pin nothing between transactions (PgBouncer in transaction mode before 1.21) cannot keep named
 *   statements: `DB_PREPARED_STATEMENTS=0` turns this off.
 */
export const PREPARE_AFTER_USES = 3;
export const PREPARED_PER_CONNECTION = 200;
/** Texts counted towards PREPARE_AFTER_USES (the oldest is forgotten first). */
const TEXTS_TRACKED = 2_000;

type Query = (...args: unknown[]) => unknown;

export function prepareRepeatedStatements(pool: pg.Pool): void {
  const uses = new Map<string, number>();
  const names = new Map<string, string>();

  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined) return known;
    const count = (uses.get(text) ?? 0) + 1;
    if (count < PREPARE_AFTER_USES) {
      uses.delete(text);
      uses.set(text, count);
      if (uses.size > TEXTS_TRACKED) uses.delete(uses.keys().next().value!);
      return undefined;
    }
    uses.delete(text);
    const name = `pb_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    names.set(text, name);
    if (names.size > TEXTS_TRACKED) names.delete(names.keys().next().value!);
    return name;
  };

  pool.on('connect', (client) => {
    const query = client.query.bind(client) as Query;
    const prepared = new Set<string>();
    (client as unknown as { query: Query }).query = (text: unknown, ...rest: unknown[]) => {
      const values = rest[0];
      if (typeof text === 'string' && rest.length === 1 && Array.isArray(values) && values.length > 0) {
        const name = nameOf(text);
        if (name !== undefined && (prepared.has(name) || prepared.size < PREPARED_PER_CONNECTION)) {
          prepared.add(name);
          return query({ name, text, values });
        }
      }
      return query(text, ...rest);
    };
  });
}
