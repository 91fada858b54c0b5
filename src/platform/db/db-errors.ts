import { EmbeddedDatabaseStoppedError } from './pglite-thread.js';

// SQLSTATE classes and codes that mean "the database is not reachable right now", as opposed to
// "this statement is wrong": connection exceptions, administrator/crash shutdown, too many connections.
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const DRIVER_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|Client was closed|Cannot use a pool after calling end/i;

/** True when an error means the database is unreachable (the request may succeed if retried). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof EmbeddedDatabaseStoppedError) return true;
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string') {
    if (e.code.startsWith('08') || UNAVAILABLE_STATES.has(e.code) || NETWORK_CODES.has(e.code)) return true;
  }
  return typeof e.message === 'string' && DRIVER_MESSAGES.test(e.message);
}
