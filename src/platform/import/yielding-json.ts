import { setImmediate as nextTurn } from 'node:timers/promises';
import { stringifyChunked } from '@discoveryjs/json-ext';

// About a millisecond of work between pauses: an import of 100,000 rows is tens of megabytes of
// JSON, which JSON.stringify would produce in one block of the event loop.
const CHUNK_CHARS = 64 * 1024;

/**
 * The UTF-8 bytes of JSON.stringify(value), in pieces, with other work let in between. Bytes, not
 * strings: the pieces are built by concatenation, and joining tens of megabytes of such strings
 * at the end would cost one long block of its own.
 */
export async function* jsonPieces(value: unknown): AsyncGenerator<Buffer> {
  for (const piece of stringifyChunked(value, { highWaterMark: CHUNK_CHARS })) {
    yield Buffer.from(piece, 'utf8');
    await nextTurn();
  }
}

/** JSON.stringify(value), without holding the event loop for a large value. */
export async function stringifyYielding(value: unknown): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const piece of jsonPieces(value)) pieces.push(piece);
  return Buffer.concat(pieces).toString('utf8');
}

/** Calls `work` for each item, pausing every `every` items so a long array does not block. */
export async function mapYielding<T, U>(items: readonly T[], work: (item: T, index: number) => U, every = 2_000): Promise<U[]> {
  const out: U[] = new Array<U>(items.length);
  for (let i = 0; i < items.length; i += 1) {
    if (i > 0 && i % every === 0) await nextTurn();
    out[i] = work(items[i]!, i);
  }
  return out;
}
