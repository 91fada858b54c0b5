import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import { setJobQueueName } from '../../src/platform/jobs/queue.js';
import { stopChildrenAndRemoveDirs } from './process.js';

// Runs before every test file (vitest.config.ts, setupFiles). Test files share their worker's module graph (isolate:
// false), so what a file must not inherit from the file before it is reset here: its own job queue, so that jobs a
// finished file left queued on the shared PostgreSQL database are never claimed by the next file's app; and the
// server and CLI processes a file started are stopped after it (test/helpers/process.ts).
setJobQueueName(`test-${process.pid}-${randomUUID().slice(0, 8)}`);
afterAll(stopChildrenAndRemoveDirs);
