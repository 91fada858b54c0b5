/**
 * Calls that arrive while the previous batch runs go together in the next one: a group commit for writes, one read
 * for many keys. One statement per item when items are few, one per batch under a stream of them, with no timer and
 * no added wait. `run` gets the items in arrival order and answers one result per item, in the same order. A failed
 * batch fails every item of it; items already waiting go in the next batch.
 *
 * With `lanes` > 1, up to that many batches run at once (a new batch starts as soon as items wait and a lane is free),
 * so the process prepares one batch while the database works on another.
 *
 * Used where many short tasks each make a one-row statement: the job runner's completions, webhook deliveries'
 * reads of their attempt and recorded successes, and the checkout's group bookings of sales.
 */
export class Batcher<Item, Result> {
  private readonly waiting: Array<{ item: Item; resolve(result: Result): void; reject(error: unknown): void }> = [];
  private running = 0;
  private inBatches = 0;

  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 500,
    private readonly lanes = 1,
  ) {}

  /** Items added and not answered yet: waiting for a batch, or in one that runs. */
  get pending(): number {
    return this.waiting.length + this.inBatches;
  }

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.running < this.lanes) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running += 1;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        this.inBatches += batch.length;
        try {
          const results = await this.run(batch.map((b) => b.item));
          batch.forEach((b, i) => b.resolve(results[i]!));
        } catch (error) {
          for (const b of batch) b.reject(error);
        } finally {
          this.inBatches -= batch.length;
        }
      }
    } finally {
      this.running -= 1;
    }
  }
}
