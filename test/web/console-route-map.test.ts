import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONSOLE_GAPS, CONSOLE_ROUTE_MAP } from '../../web/src/console/route-map.js';

const root = new URL('../../', import.meta.url);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  id: string;
  method: string;
  path: string;
}

/** Every developer operation of the OpenAPI document: `/api/developer/…`, deprecated ones aside. */
function developerOperations(): Operation[] {
  const doc = JSON.parse(fs.readFileSync(new URL('docs/openapi.json', root), 'utf8')) as {
    paths: Record<string, Partial<Record<(typeof METHODS)[number], { operationId?: string; deprecated?: boolean }>>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const op = item[method];
      if (!op || op.deprecated || !path.startsWith('/api/developer/')) return [];
      return [{ id: op.operationId ?? `${method} ${path}`, method: method.toUpperCase(), path }];
    }),
  );
}

/** The console's source (pages, queries and routes), to check what the map claims against what the code calls. */
function consoleSource(): string[] {
  const files: string[] = [];
  const walk = (dir: URL) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const url = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
      if (entry.isDirectory()) walk(url);
      else if (/\.tsx?$/.test(entry.name) && entry.name !== 'route-map.ts') files.push(fs.readFileSync(url, 'utf8'));
    }
  };
  walk(new URL('web/src/console/', root));
  return files;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `api.GET('/api/developer/…'` (the typed client's call, possibly across lines). */
const calls = (source: string[], op: Operation) => {
  const pattern = new RegExp(`api\\.${op.method}\\(\\s*'${escape(op.path)}'`);
  return source.some((text) => pattern.test(text));
};

describe('the console’s route map', () => {
  const operations = developerOperations();
  const byId = new Map(operations.map((op) => [op.id, op]));
  const mapped = new Set(Object.values(CONSOLE_ROUTE_MAP).flat());
  const source = consoleSource();
  const gapKeys = Object.keys(CONSOLE_GAPS);
  /** The operations a gap names: one operation id, or every operation under a path prefix. */
  const underGap = (key: string) => operations.filter((op) => (key.startsWith('/') ? op.path.startsWith(key) : op.id === key));
  const isGap = (op: Operation) => gapKeys.some((key) => underGap(key).includes(op));

  it('reaches every developer operation of docs/openapi.json from a page, or names it as a gap', () => {
    const missing = operations.filter((op) => !mapped.has(op.id) && !isGap(op)).map((op) => `${op.id} (${op.method} ${op.path})`);
    expect(missing, 'developer operations no console page uses: give them a page and add them to web/src/console/route-map.ts').toEqual([]);
  });

  it('names only operations that exist, and the console code really calls each of them', () => {
    const unknown = [...mapped].filter((id) => !byId.has(id));
    expect(unknown, 'operations in the route map that docs/openapi.json does not have').toEqual([]);
    const emptyGaps = gapKeys.filter((key) => underGap(key).length === 0);
    expect(emptyGaps, 'gaps that name no operation of docs/openapi.json').toEqual([]);
    const uncalled = [...mapped].filter((id) => byId.has(id) && !calls(source, byId.get(id)!));
    expect(uncalled, 'mapped operations no file under web/src/console calls').toEqual([]);
  });

  it('lists as gaps only operations some of which no page uses yet', () => {
    const closed = gapKeys.filter((key) => underGap(key).length > 0 && underGap(key).every((op) => mapped.has(op.id) || calls(source, op)));
    expect(closed, 'these gaps have a page now: move them into CONSOLE_ROUTE_MAP').toEqual([]);
  });

  it('maps pages that are routes of the console', () => {
    const routes = source.join('\n');
    const notRoutes = Object.keys(CONSOLE_ROUTE_MAP)
      .filter((page) => page.startsWith('/'))
      .filter((page) => {
        const segments = page.slice(1).split('/');
        // A nested route names its last segment (`files` under `products/:productId`); a top-level one its whole path.
        return !routes.includes(`path: '${page.slice(1)}'`) && !routes.includes(`path: '${segments.at(-1)}'`);
      });
    expect(notRoutes, 'pages in the route map with no route of that path').toEqual([]);
  });
});
