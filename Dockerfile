# syntax=docker/dockerfile:1
# The Patchbay API as a container image. Build from the repository root:
#   docker build -t patchbay .
# Run it with PostgreSQL and Redis: compose.yaml (docker compose up --build). See docs/operations.md, "Container image".

# Build: every dependency (the TypeScript toolchain included), then the build that `npm ci` runs as its prepare
# script: the server into dist/ (esbuild, one file per source file, three dependencies bundled into dist/vendor/) and the
# web front end into web/dist/.
# Installed without scripts first, so this layer is reused while only the sources change.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime dependencies: exactly the lockfile's, without the development tools (no TypeScript, tsx, esbuild or Vite).
# --omit=optional too: TypeScript is also an optional peer of a runtime dependency's config loader (mjml → cosmiconfig),
# which npm would otherwise install; the only other optional package it leaves out is pg's Cloudflare socket.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# The service: node runs the build output; no TypeScript source or toolchain in the image.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/var/lib/patchbay
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
# The embedded database and local file storage live here when DATABASE_URL / STORAGE_* do not say otherwise.
RUN mkdir -p /var/lib/patchbay && chown node:node /var/lib/patchbay
VOLUME ["/var/lib/patchbay"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1's command (no npm, no shell): SIGTERM from `docker stop` reaches the server,
# which drains requests and jobs (up to 25 s) and exits 0. Keep the stop timeout above that.
STOPSIGNAL SIGTERM
CMD ["node", "dist/server.js"]
