/**
 * Deep OFFSET pages cost O(offset) in PostgreSQL. For the unfiltered list of a
 * workspace we keep the id at every `every`-th position (newest first), valid
 * for one value of a version that changes whenever the list changes. A deep
 * page then starts at its anchor and skips fewer than `every` rows. Anchors
 * are rebuilt with one index scan after a change; concurrent requests share
 * one rebuild.
 */
export class PageAnchorCache {
  private readonly entries = new Map<number, { version: number; anchors: number[] }>();
  private readonly building = new Map<string, Promise<number[]>>();

  constructor(
    readonly every: number,
    private readonly maxEntries = 1_000,
  ) {}

  async get(key: number, version: number, build: () => Promise<number[]>): Promise<number[]> {
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

  /** Where a page at `offset` starts: the anchor id and the rows to skip after it, or null past the end. */
  locate(anchors: number[], offset: number): { atOrBefore: number; skip: number } | null {
    const anchor = anchors[Math.floor(offset / this.every)];
    return anchor === undefined ? null : { atOrBefore: anchor, skip: offset % this.every };
  }
}

/** Offsets from which the anchors are used; shallower pages are cheap as they are. */
export const DEEP_PAGE_OFFSET = 10_000;
