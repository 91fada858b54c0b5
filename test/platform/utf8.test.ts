import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { firstInvalidUtf8Offset, Utf8Guard } from '../../src/platform/http/utf8.js';
import { textLength } from '../../src/platform/http/text-hygiene.js';
import { jsonPieces, stringifyYielding } from '../../src/platform/import/yielding-json.js';

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

async function guarded(chunks: Buffer[]): Promise<number | null> {
  const guard = new Utf8Guard();
  Readable.from(chunks).pipe(guard);
  for await (const _ of guard) void _;
  return guard.invalidAt;
}

describe('the offset of the first bytes that are not UTF-8', () => {
  it.each([
    ['a lone continuation byte', bytes('abc', [0x80], 'd'), 3],
    ['a Latin-1 byte', bytes('Gr', [0xfc], 'n'), 2],
    ['a lead byte without its continuation', bytes('x', [0xc3, 0x28]), 1],
    ['an encoded surrogate', bytes('ok ', [0xed, 0xa0, 0x80]), 3],
    ['an over-long encoding', bytes('/', [0xc0, 0xaf]), 1],
    ['a character cut off at the end', bytes('€ ', [0xe2, 0x82]), 4],
    ['the first of two', bytes('é', [0xff], 'é', [0xfe]), 2],
  ])('%s', (_label, input, offset) => {
    expect(firstInvalidUtf8Offset(input)).toBe(offset);
  });
});

describe('the UTF-8 guard of a streamed upload', () => {
  const text = Buffer.from('name\nZoë 🎹 Ünïcödé\n'.repeat(50));

  it('accepts multi-byte characters split across every possible chunk boundary', async () => {
    for (let cut = 1; cut < 40; cut += 1) {
      expect(await guarded([text.subarray(0, cut), text.subarray(cut, cut + 7), text.subarray(cut + 7)])).toBeNull();
    }
    expect(await guarded([...text].map((b) => Buffer.from([b])))).toBeNull();
  });

  it('finds the offset of bad bytes in any chunk, and a character cut off by the end of the file', async () => {
    const bad = Buffer.from(text);
    bad[301] = 0xff;
    for (const cut of [1, 300, 301, 302, 600]) expect(await guarded([bad.subarray(0, cut), bad.subarray(cut)])).toBe(301);
    expect(await guarded([Buffer.from('ab'), Buffer.from([0xf0, 0x9f])])).toBe(2);
  });
});

describe('JSON serialised in pieces', () => {
  it('is exactly JSON.stringify, in bytes and as text', async () => {
    const value = { source: 'json', rows: Array.from({ length: 3_000 }, (_, i) => ({ email: `p${i}@x.test`, name: `Zoë ${'🎹'.repeat(i % 5)}`, n: i, ok: i % 2 === 0, none: null })), missing: undefined };
    const pieces: Buffer[] = [];
    for await (const piece of jsonPieces(value)) pieces.push(piece);
    expect(pieces.length).toBeGreaterThan(1);
    expect(Buffer.concat(pieces).toString('utf8')).toBe(JSON.stringify(value));
    expect(await stringifyYielding(value)).toBe(JSON.stringify(value));
  });
});

describe('text length', () => {
  it.each([
    ['ASCII', 'abc', 3],
    ['an emoji (two UTF-16 units)', '🎛', 1],
    ['100 emoji', '🎛'.repeat(100), 100],
    ['combining marks count as characters, as PostgreSQL counts them', 'e\u0301', 2],
    ['an unpaired surrogate counts once', 'a\uD800b', 3],
  ])('%s', (_label, value, length) => {
    expect(textLength(value)).toBe(length);
  });
});
