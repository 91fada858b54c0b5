import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { storageNotice } from '../../src/operator/storage-notice.js';
import { migratedDataDir, startServer, stop } from '../helpers/process.js';

// On PostgreSQL STORAGE_DRIVER defaults to none, so file and package routes answer 503: the start-up log says so once.

const NOTICE = /Private storage is off \(STORAGE_DRIVER=none, the default with DATABASE_URL\).*503 PRIVATE_PACKAGE_STORAGE_REQUIRED.*STORAGE_DRIVER=s3/;
const noticeLines = (stdout: string) => stdout.split('\n').filter((line) => NOTICE.test(line));

describe('the start-up notice about private storage', () => {
  it('is given exactly when no storage is configured: the default with DATABASE_URL, or STORAGE_DRIVER=none', () => {
    const server = { DATABASE_URL: 'postgres://patchbay@db.internal:5432/patchbay' };
    expect(storageNotice(loadConfig(server).storage)).toMatch(NOTICE);
    expect(storageNotice(loadConfig({ STORAGE_DRIVER: 'none' }).storage)).toMatch(NOTICE);
    expect(storageNotice(loadConfig({}).storage)).toBeNull(); // embedded: a local directory
    expect(storageNotice(loadConfig({ ...server, STORAGE_DRIVER: 'local', STORAGE_DIR: '/srv/patchbay' }).storage)).toBeNull();
    expect(storageNotice(loadConfig({ ...server, STORAGE_S3_BUCKET: 'patchbay-files' }).storage)).toBeNull();
  });

  // A real server process: on PostgreSQL with its default storage when the run has a server, else embedded with
  // STORAGE_DRIVER=none (the same configuration as far as storage goes).
  it('is one warning line in the log of a server started without storage, and absent with storage', { timeout: 300_000 }, async () => {
    const withoutStorage: Record<string, string> = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { STORAGE_DRIVER: 'none' };
    const server = await startServer(await migratedDataDir('patchbay-storage-'), { ...withoutStorage, DEMO: '0' });
    await stop(server.child);
    const { stdout } = server.output();
    const lines = noticeLines(stdout);
    expect(lines, stdout).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: expect.stringMatching(NOTICE) });

    const withStorage = await startServer(await migratedDataDir('patchbay-storage-'), { DEMO: '0' });
    await stop(withStorage.child);
    expect(noticeLines(withStorage.output().stdout)).toEqual([]);
  });
});
