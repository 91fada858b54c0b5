import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateClientTypes } from '../client/generate.js';

const root = new URL('../../', import.meta.url);

describe('the front end’s typed client', () => {
  it('is generated from the committed OpenAPI document (npm run openapi)', async () => {
    const committed = fs.readFileSync(new URL('web/src/api/schema.d.ts', root), 'utf8');
    const expected = await generateClientTypes(new URL('docs/openapi.json', root));
    expect(committed === expected, 'web/src/api/schema.d.ts is stale: run `npm run openapi` and commit it').toBe(true);
  });

  it('has no hand-written request types: every call goes through openapi-fetch with the generated paths', () => {
    const offenders: string[] = [];
    const walk = (dir: URL) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const url = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
        if (entry.isDirectory()) walk(url);
        else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
          const text = fs.readFileSync(url, 'utf8');
          // A bare fetch or XMLHttpRequest would bypass the typed client (the client module itself wraps fetch).
          if (/\bfetch\(|XMLHttpRequest/.test(text) && !url.pathname.endsWith('/web/src/api/client.ts')) offenders.push(url.pathname);
        }
      }
    };
    walk(new URL('web/src/', root));
    expect(offenders).toEqual([]);
  });
});
