import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../src/migrations/index.js';

// Migrations are append-only: a database that applied one will never apply it again, so an edit
// to a landed migration silently diverges new databases from old ones. Each migration's content
// is pinned in src/migrations/checksums.json; add the line for a new migration in the same commit.

const DIR = new URL('../../src/migrations/', import.meta.url);
const pinned = JSON.parse(fs.readFileSync(new URL('checksums.json', DIR), 'utf8')) as Record<string, string>;
const hashOf = (name: string) => createHash('sha256').update(fs.readFileSync(new URL(`${name}.ts`, DIR))).digest('hex');

describe('migrations', () => {
  it.each(Object.keys(migrations))('%s is unchanged since it landed', (name) => {
    expect(pinned[name], `new migration: add "${name}": "${hashOf(name)}" to src/migrations/checksums.json`).toBeDefined();
    expect(hashOf(name), `${name}.ts was edited after it landed; write a new migration instead`).toBe(pinned[name]);
  });

  it('pins no migration that does not exist, and lists them in order', () => {
    expect(Object.keys(pinned)).toEqual(Object.keys(migrations));
    expect(Object.keys(migrations)).toEqual([...Object.keys(migrations)].sort());
  });
});
