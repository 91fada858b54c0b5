import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ (the CLI and server processes some tests start) and the migrated database template.
    globalSetup: ['test/helpers/global-setup.ts'],
    // Before each file: a job queue of its own (test/helpers/per-file.ts).
    setupFiles: ['test/helpers/per-file.ts'],
    pool: 'forks',
    // Each file starts an embedded database of its own, and its WebAssembly is compiled anew each time: with V8's
    // baseline compiler only (as the CLI runs it, docs/operations.md, "The build") the suite skips the optimising
    // recompilation it never pays back in a file's few seconds of small statements (four of the slowest files:
    // 69-73 s against 82-86 s side by side). No effect on PostgreSQL.
    poolOptions: { forks: { execArgv: ['--liftoff-only'] } },
    // Files share their worker's modules instead of importing the whole service again each (about a second and a
    // half of CPU per file, 133 files, on both databases). Every file builds its own app and database; what must
    // not carry over between files is reset in the set-up file above.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file opens its own embedded database; two at a time fit a 2-core machine.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
