/**
 * Deep OFFSET pages cost O(offset) in PostgreSQL. For the unfiltered list of a
 * workspace we keep the sort key (an id, or a timestamp and id) at every `every`-th position (newest first), valid
 * for one value of a version that changes whenever the list changes. A deep
 * page then starts at its anchor and skips fewer than `every` rows. Anchors
 * are rebuilt with one statement (anchors and version from one snapshot) when a page's statement reports
 * another version; concurrent requests share one rebuild.
 */
export interface Anchors<A> {
  version: number;
  anchors: A[];
}

export class PageAnchorCache<A = number> {
  private readonly entries = new Map<number, Anchors<A>>();
  private readonly building = new Map<number, Promise<Anchors<A>>>();

  constructor(
    readonly every: number,
    private readonly maxEntries = 1_000,
  ) {}

  /** The anchors last built for this key, whatever their version (the caller checks it against its page). */
  peek(key: number): Anchors<A> | undefined {
    return this.entries.get(key);
  }

  /** Builds the anchors again; a request that arrives while a build runs shares it. */
  async rebuild(key: number, build: () => Promise<Anchors<A>>): Promise<Anchors<A>> {
    let pending = this.building.get(key);
    if (!pending) {
      pending = build().finally(() => this.building.delete(key));
      this.building.set(key, pending);
    }
    const built = await pending;
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, built);
    return built;
  }

  /**
   * Where a page at `offset` starts: the nearest anchor at or before it (a row's sort key) and the rows to skip
   * after it, or null when there are no anchors (an empty list: plain OFFSET is as cheap).
   */
  locate(anchors: A[], offset: number): { atOrBefore: A; skip: number } | null {
    if (anchors.length === 0) return null;
    const index = Math.min(Math.floor(offset / this.every), anchors.length - 1);
    return { atOrBefore: anchors[index]!, skip: offset - index * this.every };
  }
}

/** Offsets from which the anchors are used; shallower pages are cheap as they are. */
export const DEEP_PAGE_OFFSET = 10_000;
