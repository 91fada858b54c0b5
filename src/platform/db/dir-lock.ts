import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class DataDirLockedError extends Error {
  constructor(dir: string, pid?: number) {
    super(
      `The embedded database in "${dir}" is in use by another Patchbay process${pid ? ` (pid ${pid})` : ''}. ` +
        'PGlite is single-process: stop the other process (server or CLI) or point DATA_DIR elsewhere.',
    );
    this.name = 'DataDirLockedError';
  }
}

interface LockOwner {
  pid: number;
  host: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as { code?: string }).code === 'EPERM';
  }
}

function readOwner(file: string): LockOwner | null {
  try {
    const owner = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? { pid: owner.pid, host: owner.host } : null;
  } catch {
    return null;
  }
}

/**
 * One process per embedded database directory. The lock file names its owner
 * (pid and host); a lock left by a process that no longer exists on this host
 * (kill -9, a crash, a power cut) is taken over at once instead of after a
 * timeout. A lock held from another host (a shared network directory) is
 * always respected. Returns the release function.
 */
export function acquireDirLock(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, '.patchbay.lock');
  const me: LockOwner = { pid: process.pid, host: os.hostname() };
  const body = JSON.stringify(me);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    // Written aside and hard-linked into place: the lock appears complete or not at all.
    const staging = `${file}.${process.pid}.${Date.now()}`;
    fs.writeFileSync(staging, body, { mode: 0o600 });
    try {
      fs.linkSync(staging, file);
      fs.unlinkSync(staging);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const owner = readOwner(file);
        if (owner && owner.pid === me.pid && owner.host === me.host) fs.rmSync(file, { force: true });
      };
    } catch (error) {
      fs.unlinkSync(staging);
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(file);
    if (owner && (owner.host !== me.host || isAlive(owner.pid))) throw new DataDirLockedError(dir, owner.pid);
    // The owner is gone (or the file is debris of an older lock format): move it aside and try again.
    // Moving (atomic) rather than deleting means two processes recovering at once cannot both win:
    // the one whose link comes second finds the other's live lock.
    const aside = `${file}.stale.${process.pid}`;
    try {
      fs.renameSync(file, aside);
      fs.rmSync(aside, { recursive: true, force: true });
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw error;
    }
  }
  throw new DataDirLockedError(dir);
}
