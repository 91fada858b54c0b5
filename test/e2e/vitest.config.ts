import { defineConfig } from 'vitest/config';

// `npm run test:e2e`: the front end in a real Chromium against a real server on a fresh PostgreSQL
// database. Files are *.e2e.ts so the unit and integration suite (`npm test`) never picks them up.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    globalSetup: ['test/e2e/global-setup.ts'],
    pool: 'forks',
    // One browser and one server at a time: a 2-core machine runs them without starving either.
    fileParallelism: false,
    testTimeout: 180_000,
    // Pages answer in well under a second on a quiet machine; a loaded CI machine gets room.
    expect: { poll: { timeout: 20_000, interval: 100 } },
    hookTimeout: 300_000,
  },
});
