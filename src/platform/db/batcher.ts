/**
 * Calls that arrive while the previous batch runs go together in the next one: a group commit for writes, one read
 * for many keys. One statement per item when items are few, one per batch under a stream of them, with no timer and
 * no added wait. `run` gets the items in arrival order and answers one result per item, in the same order. A failed
 * batch fails every item of it; items already waiting go in the next batch.
 *
 * Used where many short tasks each make a one-row statement: the job runner's completions, and webhook deliveries'
 * reads of their attempt and recorded successes.
 */
export class Batcher<Item, Result> {
  private readonly waiting: Array<{ item: Item; resolve(result: Result): void; reject(error: unknown): void }> = [];
  private running = false;

  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 500,
  ) {}

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        try {
          const results = await this.run(batch.map((b) => b.item));
          batch.forEach((b, i) => b.resolve(results[i]!));
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
