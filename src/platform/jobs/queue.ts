import { EventEmitter } from 'node:events';

// Instances that share a database and a queue name share its jobs. The name is read once
// from JOBS_QUEUE (default "default"); the test helpers give each test process its own, so
// test files sharing one PostgreSQL database never run each other's jobs.
let queueName = process.env.JOBS_QUEUE || 'default';

export const jobQueueName = () => queueName;

/** For the test helpers only: isolate this process's jobs from other processes on the same database. */
export function setJobQueueName(name: string): void {
  queueName = name;
}

/** Wakes the runners of this process after a commit that enqueued jobs. */
const enqueued = new EventEmitter();
enqueued.setMaxListeners(0);

export function notifyJobsEnqueued(): void {
  enqueued.emit('jobs');
}

export function onJobsEnqueued(listener: () => void): () => void {
  enqueued.on('jobs', listener);
  return () => enqueued.off('jobs', listener);
}
