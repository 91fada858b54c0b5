/**
 * Deep OFFSET pages cost O(offset) in PostgreSQL. For the unfiltered list of a
 * workspace we keep the sort key (an id, or a timestamp and id) at every `every`-th position (newest first), valid
 * for one value of a version that changes whenever the list changes. A deep
 * page then starts at its anchor and skips fewer than `every` rows. Anchors
 * are rebuilt with one index scan after a change; concurrent requests share
 * one rebuild.
 */
export class PageAnchorCache<A = number> {
  private readonly entries = new Map<number, { version: number; anchors: A[] }>();
  private readonly building = new Map<string, Promise<A[]>>();

  constructor(
    readonly every: number,
    private readonly maxEntries = 1_000,
  ) {}

  async get(key: number, version: number, build: () => Promise<A[]>): Promise<A[]> {
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.anchors;
    const id = `${key}:${version}`;
    let pending = this.building.get(id);
    if (!pending) {
      pending = build().finally(() => this.building.delete(id));
      this.building.set(id, pending);
    }
    const anchors = await pending;
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { version, anchors });
    return anchors;
  }

  /** Where a page at `offset` starts: the anchor (a row's sort key) and the rows to skip after it, or null past the end. */
  locate(anchors: A[], offset: number): { atOrBefore: A; skip: number } | null {
    const anchor = anchors[Math.floor(offset / this.every)];
    return anchor === undefined ? null : { atOrBefore: anchor, skip: offset % this.every };
  }
}

/** Offsets from which the anchors are used; shallower pages are cheap as they are. */
export const DEEP_PAGE_OFFSET = 10_000;
