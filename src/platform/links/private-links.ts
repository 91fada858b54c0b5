import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError, defineErrors, type CodesOf, type ErrorSpec } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';

const linkErrorSpecs = {
  LINK_EXPIRED: { status: 410, title: 'This private link has expired', description: 'the private link has expired; ask for a new one' },
} as const satisfies Record<string, ErrorSpec>;
export const LinkErrors = defineErrors(linkErrorSpecs);

declare module '../http/errors.js' {
  interface ErrorCodeRegistry extends CodesOf<typeof linkErrorSpecs> {}
}

/** How long a private link works. */
export const LINK_TTL_SECONDS = 300 as const;

/** What every route that hands out a private link answers (files, plugin packages). */
export const LinkAnswerSchema = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      description:
        'An absolute private link on this service (built from PUBLIC_BASE_URL; `curl -OJ "$url"` works): fetch it within expiresIn seconds and never publish it. Its `signature` is redacted from every log',
    }),
    filename: Type.String(),
    expiresIn: Type.Literal(LINK_TTL_SECONDS),
  },
  { additionalProperties: false },
);
export type LinkAnswer = ReturnType<PrivateLinks['linkFor']>;

/**
 * Signs and checks private links: an HMAC-SHA256 over the path and the expiry, keyed with a
 * secret derived from the service's key-encryption key (so every instance that shares it
 * accepts the links of the others). A link is usable any number of times until it expires.
 */
export class LinkSigner {
  private readonly keys: Buffer[];

  /** The first secret signs; every one verifies (a rotation window). */
  constructor(secrets: Buffer[]) {
    if (secrets.length === 0) throw new Error('LinkSigner needs a secret');
    this.keys = secrets.map((s) => Buffer.from(hkdfSync('sha256', s, Buffer.alloc(0), 'patchbay private links v1', 32)));
  }

  private mac(key: Buffer, path: string, expires: number): Buffer {
    return createHmac('sha256', key).update(`${path}\n${expires}`).digest();
  }

  /** `path?expires=…&signature=…`, valid for `ttlSeconds`. */
  sign(path: string, ttlSeconds: number = LINK_TTL_SECONDS, now = Date.now()): string {
    const expires = Math.floor(now / 1000) + ttlSeconds;
    return `${path}?expires=${expires}&signature=${this.mac(this.keys[0]!, path, expires).toString('base64url')}`;
  }

  /** A wrong or missing signature is 'tampered' even when the link has also expired. */
  verify(path: string, expires: unknown, signature: unknown, now = Date.now()): 'ok' | 'tampered' | 'expired' {
    if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof signature !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'tampered';
    const given = Buffer.from(signature, 'base64url');
    const valid = this.keys.some((key) => {
      const expected = this.mac(key, path, Number(expires));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
    if (!valid) return 'tampered';
    return Number(expires) * 1000 < now ? 'expired' : 'ok';
  }
}

/** What a module serves behind a link: the bytes and how to name them. `completed` runs once the whole body was sent. */
export interface LinkedObject {
  body: Readable;
  filename: string;
  contentType: string;
  size: number | null;
  completed?: () => Promise<void>;
}

export type LinkResolver = (id: string) => Promise<LinkedObject | null>;

declare module 'fastify' {
  interface FastifyInstance {
    privateLinks: PrivateLinks;
  }
}

export class PrivateLinks {
  private readonly resolvers = new Map<string, LinkResolver>();
  private readonly baseUrl: string;

  /** `publicBaseUrl`: where clients reach this service (PUBLIC_BASE_URL); links are absolute URLs under it. */
  constructor(
    readonly signer: LinkSigner,
    publicBaseUrl: string,
  ) {
    this.baseUrl = publicBaseUrl.replace(/\/$/, '');
  }

  /** A module serves links of `kind` (files, packages…) with `resolve`. */
  register(kind: string, resolve: LinkResolver): void {
    this.resolvers.set(kind, resolve);
  }

  /** A link for one object, as the API answers it: absolute, so a client can fetch it as it is. The signature covers the path. */
  linkFor(kind: string, id: string, filename: string): { url: string; filename: string; expiresIn: typeof LINK_TTL_SECONDS } {
    return { url: this.baseUrl + this.signer.sign(`/api/private-links/${kind}/${encodeURIComponent(id)}`), filename, expiresIn: LINK_TTL_SECONDS };
  }

  resolver(kind: string): LinkResolver | undefined {
    return this.resolvers.get(kind);
  }
}

const contentDisposition = (filename: string) =>
  `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(filename)}`;

/**
 * `GET /api/private-links/{kind}/{id}?expires=…&signature=…`: public (the signature is the
 * credential), streamed, never cached by anyone but the browser that asked. A wrong signature
 * (or an unknown object) answers 404, an expired link 410.
 */
export function registerPrivateLinkRoute(app: FastifyInstance, links: PrivateLinks): void {
  app.decorate('privateLinks', links);
  app.get(
    '/api/private-links/:kind/:id',
    {
      config: { policy: { auth: 'public' } },
      schema: {
        tags: ['downloads'],
        summary: 'Download through a private link',
        description:
          'The URL a link answer gives (`url`, valid for `expiresIn` seconds). Streams the file as an attachment with `Cache-Control: private, no-store`. A tampered or unknown link answers 404, an expired one 410: ask for a new link.',
        params: Type.Object({ kind: Type.String({ pattern: '^[a-z]+$', maxLength: 20 }), id: Type.String({ minLength: 1, maxLength: 200 }) }),
        querystring: Type.Object({ expires: Type.Optional(Type.String({ maxLength: 20 })), signature: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false }),
        response: { 200: Type.String({ description: 'the file (application/octet-stream or its type)' }), ...errorResponses(400, 404, 410, 503) },
      },
    },
    async (request, reply) => {
      const { kind, id } = request.params as { kind: string; id: string };
      const { expires, signature } = request.query as { expires?: string; signature?: string };
      const verdict = links.signer.verify(`/api/private-links/${kind}/${encodeURIComponent(id)}`, expires, signature);
      const resolve = links.resolver(kind);
      if (verdict === 'tampered' || !resolve) throw new AppError('NOT_FOUND', 'No such link');
      if (verdict === 'expired') throw new AppError(LinkErrors.LINK_EXPIRED, 'This link has expired; request a new one');
      const object = await resolve(id);
      if (!object) throw new AppError('NOT_FOUND', 'No such link');
      reply
        .header('cache-control', 'private, no-store')
        .header('content-disposition', contentDisposition(object.filename))
        .type(object.contentType);
      if (object.size !== null) reply.header('content-length', String(object.size));
      if (object.completed) {
        const done = object.completed;
        // Counted once the last byte has been handed to the client, not when the download started.
        reply.raw.once('finish', () => void done().catch((error: unknown) => request.log.warn({ err: { message: (error as Error).message } }, 'download not counted')));
      }
      return reply.send(object.body);
    },
  );
}
