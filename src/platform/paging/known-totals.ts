import type { ListTotals } from './page-statement.js';

/**
 * Exact totals of filtered lists with the list version they were counted at, per instance, by a key the module
 * builds (workspace, scope and filter). A list's statement reads the version and counts again only when it moved
 * (docs/performance-lists.md), so a kept total is never served stale; a miss only costs the count. Oldest first out.
 */
export class KnownTotals {
  private readonly entries = new Map<string, ListTotals>();

  constructor(private readonly maxEntries = 10_000) {}

  get(key: string | null): ListTotals | undefined {
    return key === null ? undefined : this.entries.get(key);
  }

  remember(key: string | null, totals: ListTotals): void {
    if (key === null) return;
    const kept = this.entries.get(key);
    if (kept && kept.version === totals.version && kept.total === totals.total) return;
    if (this.entries.size >= this.maxEntries && !kept) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { total: totals.total, version: totals.version });
  }
}

/**
 * One cache per database handle: a process that serves two databases (two app instances in one test process, a
 * tool beside the server) must never answer one database's list from the other's totals or anchors, whose keys
 * (workspace ids) and list versions can coincide. In a server there is one handle, so one cache.
 */
export function perDatabase<T>(make: () => T): (db: object) => T {
  const caches = new WeakMap<object, T>();
  return (db) => {
    let cache = caches.get(db);
    if (cache === undefined) {
      cache = make();
      caches.set(db, cache);
    }
    return cache;
  };
}
