/** How long a client may take, and how much of the server one address may hold. 0 disables a cap. */
export interface HttpLimits {
  /** Request line and headers must arrive within this (Node's headersTimeout). */
  headersTimeoutMs: number;
  /** The body of an ordinary request (JSON, at most 1 MiB) must arrive within this. */
  bodyTimeoutMs: number;
  /** The whole of any request, uploads included, must arrive within this (Node's requestTimeout). */
  requestTimeoutMs: number;
  /** A connection with no traffic for this long is closed. */
  idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Open connections per client address. */
  maxConnectionsPerIp: number;
  /** Requests in progress per client address on the public (unauthenticated) API routes. */
  publicInflightPerIp: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  requestTimeoutMs: 300_000,
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnectionsPerIp: 128,
  publicInflightPerIp: 32,
};
