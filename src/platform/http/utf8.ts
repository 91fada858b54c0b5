import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';

// Bytes that are not UTF-8 are refused, never decoded with U+FFFD in their place: these find where
// the first bad sequence is, in a whole body or in an upload as it streams past.

const lossy = new TextDecoder('utf-8', { ignoreBOM: true });

/** Bytes up to the first bad sequence re-encode to themselves; the first difference is the offset. */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  const original = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const reencoded = Buffer.from(lossy.decode(bytes), 'utf8');
  let low = 0;
  let high = Math.min(original.length, reencoded.length);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (original.subarray(0, middle).equals(reencoded.subarray(0, middle))) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** How many bytes at the end start a character that the next chunk must complete. */
function unfinishedTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/**
 * Passes a byte stream through unchanged and notes the offset of the first sequence that is not
 * UTF-8 (`invalidAt`, null while there is none), so that the reader behind it can say which row
 * and column held it.
 */
export class Utf8Guard extends Transform {
  invalidAt: number | null = null;
  private carry = Buffer.alloc(0);
  private checked = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.invalidAt === null) {
      const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
      const complete = bytes.subarray(0, bytes.length - unfinishedTail(bytes));
      if (!isUtf8(complete)) this.invalidAt = this.checked + firstInvalidUtf8Offset(complete);
      this.checked += complete.length;
      this.carry = Buffer.from(bytes.subarray(complete.length));
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    // A character cut off by the end of the file.
    if (this.invalidAt === null && this.carry.length > 0) this.invalidAt = this.checked;
    callback();
  }
}
