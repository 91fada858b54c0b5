import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file opens its own embedded database; two at a time fit a 2-core machine.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
