import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/platform/db/batcher.js';

// src/platform/db/batcher.ts: writes that arrive while one runs go together in the next.

describe('Batcher', () => {
  it('writes a lone item at once, and the items that arrive meanwhile together in the next write, in order', async () => {
    const writes: number[][] = [];
    let release!: () => void;
    let first = true;
    const group = new Batcher<number, string>(async (items) => {
      writes.push(items);
      if (first) {
        first = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return items.map((n) => `done ${n}`);
    });
    const a = group.add(1);
    expect(writes).toEqual([[1]]);
    const rest = [2, 3, 4].map((n) => group.add(n));
    release();
    expect(await Promise.all([a, ...rest])).toEqual(['done 1', 'done 2', 'done 3', 'done 4']);
    expect(writes).toEqual([[1], [2, 3, 4]]);
  });

  it('fails every item of a failed write, and goes on with the items that wait', async () => {
    let calls = 0;
    let release!: () => void;
    const group = new Batcher<string, string>(async (items) => {
      calls += 1;
      if (calls === 1) {
        await new Promise<void>((resolve) => (release = resolve));
        throw new Error('the database went away');
      }
      return items.map((s) => s.toUpperCase());
    });
    const failed = group.add('a');
    const later = group.add('b');
    release();
    await expect(failed).rejects.toThrow('the database went away');
    expect(await later).toBe('B');
  });

  it('writes at most maxBatch items at once', async () => {
    const sizes: number[] = [];
    let release!: () => void;
    let first = true;
    const group = new Batcher<number, number>(async (items) => {
      sizes.push(items.length);
      if (first) {
        first = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return items;
    }, 3);
    const all = Array.from({ length: 8 }, (_, n) => group.add(n));
    release();
    expect(await Promise.all(all)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(sizes).toEqual([1, 3, 3, 1]);
  });
});

describe('Batcher with two lanes', () => {
  it('starts a second batch while the first runs, and the items that arrive while both run go together in the next', async () => {
    const writes: number[][] = [];
    const releases: Array<() => void> = [];
    const group = new Batcher<number, number>(
      async (items) => {
        writes.push(items);
        if (writes.length <= 2) await new Promise<void>((resolve) => releases.push(resolve));
        return items.map((n) => n * 10);
      },
      500,
      2,
    );
    const a = group.add(1);
    const b = group.add(2);
    expect(writes).toEqual([[1], [2]]);
    const rest = [3, 4, 5].map((n) => group.add(n));
    expect(group.pending).toBe(5);
    releases[0]!();
    expect(await a).toBe(10);
    expect(await Promise.all(rest)).toEqual([30, 40, 50]);
    expect(writes).toEqual([[1], [2], [3, 4, 5]]);
    releases[1]!();
    expect(await b).toBe(20);
    expect(group.pending).toBe(0);
  });
});
