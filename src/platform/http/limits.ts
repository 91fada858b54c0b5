import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, CommonErrors } from './errors.js';
import { problemResponse, problemTypeBase } from './error-handler.js';
import type { HttpLimits } from './limit-settings.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An upload route: its body may take up to the request timeout, not the body timeout. */
    longBody?: boolean;
    /**
     * A public route that bounds its own requests in progress because it authenticates its caller
     * another way (the signed checkout webhook): the per-address cap meant for anonymous callers
     * does not count it.
     */
    ownInflightBound?: boolean;
  }
}

// The settings live apart from the server code, so configuration (and every CLI command) loads without the HTTP stack.
export { DEFAULT_HTTP_LIMITS, type HttpLimits } from './limit-settings.js';

/**
 * The HTTP server with the timeouts Node enforces itself. Node checks the header and request
 * timeouts on an interval (30 s by default, which would let a slow client hold a socket that
 * long past its limit); here it is one second.
 */
export function createHttpServer(limits: HttpLimits, handler: http.RequestListener): http.Server {
  const server = http.createServer(
    {
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1_000,
    },
    handler,
  );
  server.timeout = limits.idleTimeoutMs;
  return server;
}

const hasBody = (request: FastifyRequest) => {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
};

const IMPORT_BODY = 1024 * 1024;

/**
 * Slow clients are cut off without affecting others: a body that does not arrive in time ends
 * the connection with a 408 problem; one address cannot hold more than its share of connections
 * or of in-flight public requests (the licensing runtime is reachable by anyone).
 */
export function registerHttpLimits(app: FastifyInstance, limits: HttpLimits): void {
  if (limits.maxConnectionsPerIp > 0) {
    const open = new Map<string, number>();
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? 'unknown';
      const count = (open.get(address) ?? 0) + 1;
      if (count > limits.maxConnectionsPerIp) {
        socket.destroy();
        return;
      }
      open.set(address, count);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    });
  }

  // Uploads (imports, delivery files: routes with a larger body limit or marked longBody) get the
  // whole request timeout; everything else the body timeout.
  app.addHook('onRequest', async (request, reply) => {
    if (!hasBody(request) || limits.bodyTimeoutMs <= 0) return;
    const upload = (request.routeOptions.bodyLimit ?? 0) > IMPORT_BODY || request.routeOptions.config?.longBody === true;
    const timeout = upload ? limits.requestTimeoutMs : limits.bodyTimeoutMs;
    if (timeout <= 0) return;
    const timer = setTimeout(() => {
      const socket = request.raw.socket;
      // Injected requests (tests, tools) have no real socket to close.
      if (!socket || socket.destroyed || typeof socket.destroy !== 'function') return;
      request.log.info({ timeoutMs: timeout }, 'request body not received in time; closing the connection');
      if (socket.writable) socket.write(problemResponse(CommonErrors.REQUEST_TIMEOUT, `The request body was not received within ${timeout / 1000} s`, problemTypeBase(request.server)));
      socket.destroy();
    }, timeout);
    timer.unref();
    const clear = () => clearTimeout(timer);
    request.raw.once('end', clear);
    request.raw.once('close', clear);
    // An answer sent before the body was read (401, 404…) also ends the wait.
    reply.raw.once('finish', clear);
  });

  if (limits.publicInflightPerIp > 0) {
    const inflight = new Map<string, number>();
    const counted = Symbol('inflight');
    type Counted = FastifyRequest & { [counted]?: string };
    const release = async (request: FastifyRequest) => {
      const ip = (request as Counted)[counted];
      if (ip === undefined) return;
      (request as Counted)[counted] = undefined;
      const left = (inflight.get(ip) ?? 1) - 1;
      if (left <= 0) inflight.delete(ip);
      else inflight.set(ip, left);
    };
    app.addHook('onRequest', async (request, reply) => {
      const policy = request.routeOptions.config?.policy;
      if (policy?.auth !== 'public' || request.routeOptions.config?.ownInflightBound === true || !request.url.startsWith('/api/')) return;
      const count = (inflight.get(request.ip) ?? 0) + 1;
      if (count > limits.publicInflightPerIp) {
        throw new AppError(CommonErrors.RATE_LIMITED, `At most ${limits.publicInflightPerIp} requests in progress per client address`, {
          headers: { 'retry-after': '1' },
        });
      }
      inflight.set(request.ip, count);
      (request as Counted)[counted] = request.ip;
      // The response's 'close' comes once in every case: answered, or the client went away at any
      // stage (onResponse and onRequestAbort each miss some of them, leaking the slot for good).
      reply.raw.once('close', () => void release(request));
    });
  }
}
