// The SQL every repository function sends, for review (like Immich's src/queries): each exported
// function of each `*.repo.ts` is called once against a Kysely whose driver runs nothing and keeps
// the compiled statements, with stand-in arguments (a value that is every number, id, string, list
// and record at once), so every optional branch that a truthy filter opens is taken. A function that sends nothing
// (a pure helper) is left out; one that cannot be driven this way is listed with why. The statements
// keep their placeholders (`$1`), never values. `npm run queries` writes src/queries/<area>.sql;
// test/platform/query-snapshots.test.ts fails while a committed file differs from what the code sends.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { DB } from '../platform/db/schema.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Properties Kysely, promises and JSON look for to decide what a value is: a stand-in has none of them. */
const NOT_THERE = new Set(['then', 'toOperationNode', 'toJSON', 'constructor', 'isSelectQueryBuilder', 'expressionType', 'compile', 'execute', 'prototype', 'nodeType', 'kind', 'asymmetricMatch', '$$typeof']);
const LIST_METHODS = new Set(['map', 'filter', 'flatMap', 'forEach', 'some', 'every', 'find', 'findIndex', 'reduce', 'slice', 'join', 'includes', 'indexOf', 'entries', 'keys', 'values', 'concat', 'at', 'sort', 'flat']);

const STRING_METHODS = new Set(['toLowerCase', 'toUpperCase', 'trim', 'trimStart', 'trimEnd', 'normalize', 'split', 'replace', 'replaceAll', 'startsWith', 'endsWith', 'padStart', 'padEnd', 'codePointAt', 'charCodeAt', 'localeCompare', 'repeat', 'substring', 'toWellFormed', 'isWellFormed']);

/** A value that answers every question a repository asks of an argument: a number (1), a list of one, a record of stand-ins. */
function standIn(depth = 0): unknown {
  const target: Record<string | symbol, unknown> = {};
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === Symbol.toPrimitive) return (hint: string) => (hint === 'string' ? 'x' : 1);
      if (prop === Symbol.iterator) return function* () { yield standIn(depth + 1); };
      if (typeof prop === 'symbol' || NOT_THERE.has(prop)) return undefined;
      if (prop === 'length' || prop === 'size') return 1;
      if (prop === 'toString') return () => 'x';
      if (STRING_METHODS.has(prop)) return (...args: unknown[]) => (String.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[prop]!.apply('x', args);
      if (prop === 'has') return () => true;
      if (prop === 'get') return () => standIn(depth + 1);
      if (prop === 'toISOString') return () => '2026-01-01T00:00:00.000Z';
      if (prop === 'getTime') return () => 0;
      if (prop === 'valueOf') return () => 1;
      if (LIST_METHODS.has(prop)) {
        const list = [standIn(depth + 1)];
        return (Array.prototype as unknown as Record<string, (...args: unknown[]) => unknown>)[prop]!.bind(list);
      }
      return depth > 6 ? 1 : standIn(depth + 1);
    },
    has: () => true,
    ownKeys: () => [],
    getOwnPropertyDescriptor: () => undefined,
  });
}

function recordingDb(statements: string[]): Kysely<DB> {
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => {
      if (event.level === 'query') statements.push(event.query.sql);
    },
  });
}

/** Every repository file, by area: `modules/<name>` → `<name>`, `platform/<name>` → `platform.<name>`. */
export function repositoryFiles(): Array<{ area: string; file: string }> {
  const found: Array<{ area: string; file: string }> = [];
  for (const layer of ['modules', 'platform']) {
    for (const dir of fs.readdirSync(path.join(SRC, layer)).sort()) {
      const full = path.join(SRC, layer, dir);
      if (!fs.statSync(full).isDirectory()) continue;
      for (const name of fs.readdirSync(full).sort()) {
        if (name.endsWith('.repo.ts')) found.push({ area: layer === 'modules' ? dir : `platform.${dir}`, file: `${layer}/${dir}/${name}` });
      }
    }
  }
  return found;
}

const tidy = (sqlText: string) => sqlText.replace(/\s+/g, ' ').trim();

/** The files' contents (`src/queries/<area>.sql` → text), from the code as it is. */
export async function generateQuerySnapshots(): Promise<Map<string, string>> {
  const byArea = new Map<string, string[]>();
  for (const { area, file } of repositoryFiles()) {
    const mod = (await import(path.join(SRC, file.replace(/\.ts$/, '.js')))) as Record<string, unknown>;
    const lines = byArea.get(area) ?? [];
    for (const name of Object.keys(mod).sort()) {
      const fn = mod[name];
      if (typeof fn !== 'function' || /^class\s/.test(Function.prototype.toString.call(fn))) continue;
      const statements: string[] = [];
      const db = recordingDb(statements);
      const args = [db, ...Array.from({ length: Math.max(0, (fn as (...a: unknown[]) => unknown).length - 1) }, () => standIn())];
      let failure: string | undefined;
      try {
        await (fn as (...a: unknown[]) => unknown)(...args);
      } catch (error) {
        // A function that reads its own answer (a row it needs, say) stops here; what it sent before is kept.
        if (statements.length === 0) failure = error instanceof Error ? error.message.split('\n')[0] : String(error);
      }
      if (statements.length === 0 && !failure) continue; // a helper that sends nothing
      lines.push(`-- ${file} ${name}`);
      if (statements.length === 0) lines.push(`-- (nothing captured: ${failure!.replace(/\d+/g, 'N')})`);
      for (const s of statements) lines.push(`${tidy(s)};`);
      lines.push('');
    }
    byArea.set(area, lines);
  }
  const files = new Map<string, string>();
  for (const [area, lines] of [...byArea].sort(([a], [b]) => a.localeCompare(b))) {
    files.set(`src/queries/${area}.sql`, `-- Generated by \`npm run queries\` from the ${area} repositories: the SQL each function sends (placeholders, never values). Do not edit.\n\n${lines.join('\n')}`);
  }
  return files;
}
