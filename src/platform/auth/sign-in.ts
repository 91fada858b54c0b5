import '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { enforceLimits } from '../http/rate-limits.js';

// What the passwordless sign-in flows share (the console; the partner and buyers' portals can
// use it too): the session cookie, and the limits on asking for links and exchanging them.

/** A browser session's cookie, sent only to the routes of its own API. */
export interface SessionCookie {
  readonly name: string;
  readonly path: string;
  readonly hours: number;
}

/** HttpOnly (no script reads it), SameSite=Lax, Secure over HTTPS; the answer that carries the token is never cached. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, cookie: SessionCookie, token: string): void {
  reply.setCookie(cookie.name, token, { httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https', path: cookie.path, maxAge: cookie.hours * 3600 });
  reply.header('cache-control', 'no-store');
}

export function clearSessionCookie(reply: FastifyReply, cookie: SessionCookie): void {
  reply.clearCookie(cookie.name, { path: cookie.path });
}

const MINUTE = 60_000;

/**
 * Link requests: `perHour` per address (`address` names it, normalised) and four times that per
 * client address, so one client cannot mail many addresses; exchanges: 30 a minute per client.
 */
export function signInLimits(app: FastifyInstance, options: { prefix: string; perHour: number; address: (request: FastifyRequest) => string }) {
  return {
    link: enforceLimits(app, [
      { max: options.perHour, windowMs: 60 * MINUTE, key: (req) => `${options.prefix}:address:${options.address(req)}` },
      { max: options.perHour * 4, windowMs: 60 * MINUTE, key: (req) => `${options.prefix}:ip:${req.ip}` },
    ]),
    exchange: enforceLimits(app, [{ max: 30, windowMs: MINUTE, key: (req) => `${options.prefix}:exchange:${req.ip}` }]),
  };
}
