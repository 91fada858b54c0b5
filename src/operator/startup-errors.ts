import { ConfigError } from '../config.js';
import { DataDirLockedError } from '../platform/db/database.js';
import { isDatabaseUnavailable } from '../platform/db/db-errors.js';
import { FixtureError } from './fixtures.js';

/** Where the service tried to connect, without credentials. */
function describeDatabase(databaseUrl: string | undefined): string {
  if (!databaseUrl) return 'the embedded database';
  try {
    const url = new URL(databaseUrl);
    return `PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname}${url.username ? ` as user "${decodeURIComponent(url.username)}"` : ''}`;
  } catch {
    return 'PostgreSQL';
  }
}

/**
 * One clear line for the operator for every failure we can recognise at start-up: a bad
 * configuration, the data directory in use, a port in use, the database unreachable or
 * refusing us, missing schema rights, a missing extension. Anything else is "Failed to start"
 * with its message; the stack trace only at LOG_LEVEL=debug.
 */
export function describeStartupFailure(error: unknown, context: { host?: string; port?: number; databaseUrl?: string | undefined }): string {
  if (error instanceof ConfigError || error instanceof DataDirLockedError || error instanceof FixtureError) return error.message;
  const e = (error ?? {}) as { code?: unknown; message?: unknown; syscall?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message.split('\n')[0]! : String(error);
  const where = describeDatabase(context.databaseUrl);

  if (e.syscall === 'listen') {
    const address = `${context.host ?? ''}:${context.port ?? ''}`;
    if (code === 'EADDRINUSE') return `Cannot listen on ${address}: the port is in use by another process (stop it, or set PORT to another port)`;
    if (code === 'EACCES') return `Cannot listen on ${address}: permission denied (ports below 1024 need privileges; set PORT to 1024 or above)`;
    if (code === 'EADDRNOTAVAIL') return `Cannot listen on ${address}: the address is not one of this machine's (check HOST)`;
  }
  if (code === '28P01' || code === '28000') return `Cannot connect to ${where}: authentication failed (${message})`;
  if (code === '3D000') return `Cannot connect to ${where}: the database does not exist (create it, or fix DATABASE_URL)`;
  if (isDatabaseUnavailable(error)) return `Cannot connect to ${where}: ${message} (is the server running and DATABASE_URL right?)`;
  if (code === '42501') {
    return (
      `The database user lacks the rights the migrations need on ${where}: ${message}. ` +
      'Grant it CREATE on the schema (GRANT CREATE ON SCHEMA public TO <user>) or run `patchbay migrate` once as the schema owner'
    );
  }
  if ((code === '58P01' || code === '0A000' || code === '42704') && /extension|pg_trgm/i.test(message)) {
    return `The PostgreSQL extension pg_trgm is not available on ${where}: ${message}. Install the contrib package, or have an administrator run CREATE EXTENSION pg_trgm`;
  }
  return `Failed to start: ${message}`;
}
