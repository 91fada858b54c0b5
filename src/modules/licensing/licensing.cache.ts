import { LRUCache } from 'lru-cache';
import type { LicenseTarget, SerialWithMachine } from './licensing.repo.js';

/**
 * How long an instance answers validate for a (product app, serial, machine) from memory. A change
 * made through another instance is seen here at the latest this long after it was read (plus the
 * one statement's duration): within the 5 s the runtime's contract allows. Changes made through
 * this instance are seen at once (see `forget`).
 */
export const VALIDATE_CACHE_MS = 4_000;
const MAX_ENTRIES = 100_000;

/** A signed token kept with the answer, reused only for the same nonce. */
export interface CachedToken {
  nonce: string | null;
  token: string;
  expiresAt: Date;
}

export interface ValidateEntry {
  /** What validate read: the serial, and this machine's active seat (if any). */
  row: SerialWithMachine;
  /** The product's offline grace when it was read (the token's lifetime depends on it). */
  offlineGraceDays: number;
  /** The change counter when the read began: a change announced after that makes the entry stale. */
  readFrom: number;
  token?: CachedToken;
}

/**
 * Validate's per-instance cache of what it read from the database (and the last token it signed),
 * keyed by workspace, product, product credential (appId), serial key and machine: an entry can
 * never answer for another workspace, product, appId or machine. Not-found serials are not cached,
 * so a serial created anywhere is found at once.
 *
 * Forgetting a serial does not search the entries: it records the change counter for the serial,
 * and an entry whose read began before that counter is stale. So an answer read while the change
 * was being committed is never served once the change is announced.
 */
export class ValidateCache {
  private readonly entries: LRUCache<string, ValidateEntry>;
  private readonly changed: LRUCache<string, number>;
  private counter = 0;
  /** Everything read before this is stale (after a change too large to note serial by serial). */
  private floor = 0;

  constructor(private readonly ttlMs = VALIDATE_CACHE_MS) {
    this.entries = new LRUCache({ max: MAX_ENTRIES, ttl: ttlMs, ttlAutopurge: false });
    // Kept at least as long as the entries they invalidate can live; if one is pushed out early
    // by a flood of changes, everything is forgotten instead (dispose below).
    this.changed = new LRUCache({
      max: MAX_ENTRIES,
      ttl: ttlMs * 2,
      noDisposeOnSet: true,
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') this.forgetAll();
      },
    });
  }

  static key(target: LicenseTarget, codeKey: string, machineId: string): string {
    return `${target.workspaceId}\u0000${target.productId}\u0000${target.credentialId}\u0000${codeKey}\u0000${machineId}`;
  }

  /** The counter to pass to `set` for a read that begins now. */
  beginRead(): number {
    return this.counter;
  }

  get(key: string, target: LicenseTarget): ValidateEntry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const changedAt = this.changed.get(serialKey(target.workspaceId, entry.row.id));
    if (entry.readFrom < this.floor || (changedAt !== undefined && entry.readFrom < changedAt) || entry.offlineGraceDays !== target.offlineGraceDays) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Keeps an answer, unless its read took so long that a change it missed may have been forgotten. */
  set(key: string, entry: ValidateEntry, readStartedAt: number): void {
    if (Date.now() - readStartedAt >= this.ttlMs) return;
    this.entries.set(key, entry);
  }

  /** This instance changed these serials: answers read before now are not served again. */
  forget(workspaceId: number, serialIds: readonly number[]): void {
    this.counter += 1;
    for (const id of serialIds) this.changed.set(serialKey(workspaceId, id), this.counter);
  }

  forgetAll(): void {
    this.counter += 1;
    this.floor = this.counter;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

const serialKey = (workspaceId: number, serialId: number) => `${workspaceId}:${serialId}`;
