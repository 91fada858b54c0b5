/** How long an instance answers a referral link from memory before it reads the link again (ms). */
export const REFERRAL_CACHE_MS = 1000;
/** Links (per product asked for) and unknown codes each kept at most, the oldest dropped first. */
export const REFERRAL_CACHE_ENTRIES = 10_000;

export interface ReferralCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * What a referral link resolves to, per instance, for `ttlMs`: the redirect reads the database once per link (and
 * product asked for) per window instead of once per click.
 *
 * - Found links are keyed by the code *and* the product asked for, and a product is only ever one of the link's own
 *   workspace (the read joins it by the agreement's workspace): no key leads to another workspace's or partner's
 *   destination.
 * - Unknown codes are kept apart, by code alone and in a map of their own, so a flood of made-up codes (or of
 *   product ids) cannot push real links out; a cached 404 is the same answer as a read one, and a code turns
 *   unknown-to-known only by its workspace's own change, which clears the cache.
 * - `clear()` (a committed change on this instance) drops everything at once, reads in flight included: a read that
 *   started before the change keeps its answer for the request that asked but is not kept.
 * - Concurrent misses of one key share one read.
 * - Another instance's change is seen when the entry expires: at most `ttlMs` after the read that filled it started.
 */
export class ReferralCache<T> {
  private readonly found = new Map<string, Entry<T>>();
  private readonly unknown = new Map<string, number>();
  private readonly reading = new Map<string, Promise<T | undefined>>();
  private generation = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly read: (code: string, productId: number | null) => Promise<T | undefined>,
    options: ReferralCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? REFERRAL_CACHE_MS;
    this.maxEntries = options.maxEntries ?? REFERRAL_CACHE_ENTRIES;
    this.now = options.now ?? Date.now;
  }

  /** The link's target, or undefined for a code that leads nowhere. */
  get(code: string, productId: number | null): Promise<T | undefined> | T | undefined {
    const now = this.now();
    const unknownUntil = this.unknown.get(code);
    if (unknownUntil !== undefined) {
      if (unknownUntil > now) return undefined;
      this.unknown.delete(code);
    }
    const key = productId === null ? code : `${code}/${productId}`;
    const entry = this.found.get(key);
    if (entry) {
      if (entry.expiresAt > now) return entry.value;
      this.found.delete(key);
    }
    const pending = this.reading.get(key);
    if (pending) return pending;
    const reading: Promise<T | undefined> = this.fill(key, code, productId, now).finally(() => {
      if (this.reading.get(key) === reading) this.reading.delete(key);
    });
    this.reading.set(key, reading);
    return reading;
  }

  private async fill(key: string, code: string, productId: number | null, startedAt: number): Promise<T | undefined> {
    const generation = this.generation;
    const value = await this.read(code, productId);
    // A change committed while this read ran cleared the cache: the answer serves this request only.
    if (generation === this.generation && this.ttlMs > 0) {
      const expiresAt = startedAt + this.ttlMs;
      if (value === undefined) this.keep(this.unknown, code, expiresAt);
      else this.keep(this.found, key, { value, expiresAt });
    }
    return value;
  }

  private keep<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    if (map.size >= this.maxEntries) map.delete(map.keys().next().value!);
    map.set(key, value);
  }

  /** Forgets everything, including reads in flight. */
  clear(): void {
    this.generation++;
    this.found.clear();
    this.unknown.clear();
    this.reading.clear();
  }

  /** Entries held (tests). */
  get size(): { found: number; unknown: number } {
    return { found: this.found.size, unknown: this.unknown.size };
  }
}
