import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateQuerySnapshots, repositoryFiles } from '../../src/operator/query-snapshots.js';

// Every query change shows in review: src/queries/<area>.sql holds the SQL each repository function sends.
const root = new URL('../../', import.meta.url);
const STALE = 'is stale: run `npm run queries` and commit it';

describe('committed SQL of the repositories', () => {
  it('src/queries/*.sql is what the repositories send', async () => {
    const files = await generateQuerySnapshots();
    expect(files.size).toBeGreaterThan(10);
    for (const [file, content] of files) {
      const committed = fs.existsSync(new URL(file, root)) ? fs.readFileSync(new URL(file, root), 'utf8') : '(missing)';
      expect(committed === content, `${file} ${STALE}`).toBe(true);
    }
    const committedFiles = fs.readdirSync(new URL('src/queries/', root)).map((name) => `src/queries/${name}`);
    expect(committedFiles.filter((f) => !files.has(f)), `files without a repository ${STALE}`).toEqual([]);
  }, 120_000);

  it('covers the repositories of every module, with placeholders and never a stand-in value', async () => {
    const files = await generateQuerySnapshots();
    const areas = new Set(repositoryFiles().map((r) => r.area));
    for (const area of areas) expect(files.has(`src/queries/${area}.sql`)).toBe(true);
    const all = [...files.values()].join('\n');
    expect(all).toMatch(/\$1/);
    expect(all).not.toContain('2026-01-01T00:00:00.000Z');
  }, 120_000);
});
