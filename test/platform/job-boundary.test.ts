import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The `jobs` table belongs to platform/jobs: producers queue through job definitions and handlers
// receive checked payloads, so nothing else may read or write the table, or the runner's repository.
// Migrations are the exception (they change the table). Tests read it through platform/jobs/jobs.testing.ts.

const SRC = path.resolve(import.meta.dirname, '../../src');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
const TABLE = /(selectFrom|updateTable|insertInto|deleteFrom|mergeInto)\(\s*'jobs'|\b(from|update|into|join)\s+jobs\b/;
const INTERNALS = /from '[^']*platform\/jobs\/(jobs\.repo|jobs\.testing)\.js'|from '\.\.?\/(\.\.\/)*jobs\/(jobs\.repo|jobs\.testing)\.js'/;

describe('the jobs table boundary', () => {
  it('no source file outside platform/jobs and the migrations reads or writes the jobs table or imports the runner’s repository', () => {
    const offenders = files(SRC)
      .filter((file) => !file.includes(`${path.sep}platform${path.sep}jobs${path.sep}`) && !file.includes(`${path.sep}migrations${path.sep}`))
      .filter((file) => {
        const text = readFileSync(file, 'utf8');
        return TABLE.test(text) || INTERNALS.test(text);
      })
      .map((file) => path.relative(SRC, file));
    expect(offenders).toEqual([]);
  });
});
