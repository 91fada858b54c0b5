# syntax=docker/dockerfile:1
# The Patchbay API as a container image. Build from the repository root:
#   docker build -t patchbay .
# Run it with PostgreSQL and Redis: compose.yaml (docker compose up --build). See README, "Container image".

# Dependencies: exactly the lockfile's, without the development tools.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# The service: TypeScript runs through tsx (a runtime dependency); there is no build step.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/var/lib/patchbay
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
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
CMD ["node", "--import", "tsx", "src/server.ts"]
