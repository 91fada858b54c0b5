import type { Db } from '../../platform/db/database.js';
import { touchCredentials } from '../products/index.js';

/**
 * When each product credential was last used by a plugin (any runtime call with its appId) and
 * with its product key (the REST status), kept in memory and written in one statement every few
 * seconds — never a database write per licensing request. Several instances each write theirs;
 * the update keeps the later time, so the order does not matter.
 */
export class ConnectionTracker {
  private pending = new Map<number, { request: Date | null; plugin: Date }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly log: { warn(obj: Record<string, unknown>, msg: string): void },
    flushMs = 5_000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  note(credentialId: number, withKey: boolean): void {
    const now = new Date();
    const seen = this.pending.get(credentialId);
    this.pending.set(credentialId, { plugin: now, request: withKey ? now : (seen?.request ?? null) });
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await touchCredentials(
        this.db,
        [...batch].map(([credentialId, t]) => ({ credentialId, request: t.request, plugin: t.plugin })),
      );
    } catch (error) {
      // Put them back for the next flush (newer notes win).
      for (const [id, t] of batch) if (!this.pending.has(id)) this.pending.set(id, t);
      this.log.warn({ err: { message: (error as Error).message } }, 'could not record plugin connections; will retry');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
