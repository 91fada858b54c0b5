import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The web front end (web/, built by `npm run build:web`), served by this process:
 *
 * - `/console/…`, `/partner-portal/…`, `/portal/…`: each app's one HTML page for every client-side
 *   route (deep links and reloads work), `no-store`, with a fresh CSP nonce per answer;
 * - `/web/assets/…`: the build's content-hashed files, cached for a year as immutable, served
 *   precompressed (brotli or gzip) when the browser takes it.
 *
 * In `dev` mode Vite runs inside this server in middleware mode (hot reload, one origin for pages
 * and API). Without a build, the pages answer 503 saying how to build; the API is unaffected.
 */
export interface WebOptions {
  /** `static` (default): the build; `dev`: Vite with hot reload (development only); `off`: no pages. */
  mode?: 'static' | 'dev' | 'off';
  /** The build directory; default `web/dist` of this package. */
  dir?: string;
}

/** The apps and where they live; web/apps.ts is the front end's copy of this list. */
const APPS = ['console', 'partner-portal', 'portal'] as const;
const WEB_BASE = '/web/';
const NONCE_PLACEHOLDER = '__PATCHBAY_CSP_NONCE__';

// Pages carry filters and paging in their query; whatever it holds is the page's business.
const AnyQuery = Type.Object({}, { additionalProperties: true });
const route = { config: { policy: { auth: 'public' as const } }, schema: { hide: true, querystring: AnyQuery } };

/** The package root: the nearest directory up from this file with a package.json (src/ or a build of it). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('web: no package.json above the server code');
    dir = parent;
  }
  return dir;
}

/**
 * No inline script, ever; styles only from our files or a tag carrying this answer's nonce
 * (Mantine's runtime CSS variables). Development adds the nonce for Vite's inline module
 * preamble and a WebSocket for hot reload.
 */
export function pageSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    `script-src 'self'${dev ? ` 'nonce-${nonce}'` : ''}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? ' ws: wss:' : ''}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sendPage(reply: FastifyReply, html: string, dev: boolean) {
  const nonce = randomBytes(18).toString('base64');
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    // Sign-in and invitation links carry their token in the fragment: no Referer may ever leave a page.
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', pageSecurityPolicy(nonce, dev))
    .send(html.replaceAll(NONCE_PLACEHOLDER, nonce));
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Front end not built</title></head><body>
<h1>The web front end is not built</h1>
<p>This server answers the API, but the pages of the console and the portals have not been built in this installation.</p>
<p>Build them with <code>npm run build:web</code> (<code>npm install</code> does it too), then reload this page.
For development with hot reload, run <code>npm run dev</code>.</p>
</body></html>`;

/** The built HTML of an app, read again when the build changes under a running server. */
function builtPages(dir: string) {
  const cache = new Map<string, { mtimeMs: number; html: string }>();
  return async (app: string): Promise<string | null> => {
    const file = join(dir, app, 'index.html');
    const info = await stat(file).catch(() => null);
    if (!info) return null;
    const cached = cache.get(app);
    if (cached && cached.mtimeMs === info.mtimeMs) return cached.html;
    const html = await readFile(file, 'utf8');
    cache.set(app, { mtimeMs: info.mtimeMs, html });
    return html;
  };
}

async function registerStatic(app: FastifyInstance, dir: string) {
  const pages = builtPages(dir);
  await app.register(fastifyStatic, { root: dir, serve: false, preCompressed: true, suppressWarning: true, decorateReply: true });
  app.get(`${WEB_BASE}assets/*`, route, (request: FastifyRequest<{ Params: { '*': string } }>, reply) =>
    // Names carry a content hash: a file never changes, so browsers and proxies keep it for a year.
    reply.sendFile(`assets/${request.params['*']}`, { immutable: true, maxAge: '365d' }),
  );
  for (const name of APPS) {
    const handler = async (_request: FastifyRequest, reply: FastifyReply) => {
      const html = await pages(name);
      if (html === null) {
        return reply
          .code(503)
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .header('content-security-policy', "default-src 'none'; frame-ancestors 'none'")
          .send(NOT_BUILT);
      }
      return sendPage(reply, html, false);
    };
    app.get(`/${name}`, route, handler);
    app.get(`/${name}/*`, route, handler);
  }
}

async function registerDev(app: FastifyInstance, root: string) {
  // A development dependency, loaded only here: production installs do not have it.
  const { createServer } = await import('vite');
  const vite = await createServer({
    configFile: join(root, 'web', 'vite.config.ts'),
    appType: 'custom',
    server: { middlewareMode: true, hmr: { server: app.server } },
  });
  app.addHook('onClose', async () => vite.close());
  const passToVite = (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    vite.middlewares(request.raw, reply.raw, () => {
      reply.raw.statusCode = 404;
      reply.raw.end();
    });
  };
  app.get(`${WEB_BASE}*`, route, passToVite);
  for (const name of APPS) {
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const source = await readFile(join(root, 'web', name, 'index.html'), 'utf8');
      return sendPage(reply, await vite.transformIndexHtml(request.url, source), true);
    };
    app.get(`/${name}`, route, handler);
    app.get(`/${name}/*`, route, handler);
  }
}

export async function registerWeb(app: FastifyInstance, options: WebOptions = {}): Promise<void> {
  const mode = options.mode ?? 'static';
  if (mode === 'off') return;
  // Encapsulated: the static plugin's reply decorators stay inside this plugin.
  await app.register(async (scope) => {
    if (mode === 'dev') await registerDev(scope, packageRoot());
    else await registerStatic(scope, options.dir ?? join(packageRoot(), 'web', 'dist'));
  });
}
