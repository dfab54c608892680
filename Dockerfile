# The production image of the webhook (see README "Deployment" and docs/dependencies.md).
#
# Two stages. `build` installs everything from the lockfile and compiles src/, pricing/, inventory/,
# amounts/ and config/ to dist/ (`npm run build`); nothing else of the repository is copied. `runtime` installs the
# production dependencies from the same lockfile (`npm ci --omit=dev`, the tree `npm run check` checks
# for native code) and adds the compiled output: no tsx, no esbuild, no TypeScript, no LiteSVM.
#
# node runs directly under tini (PID 1), so `docker stop`'s SIGTERM reaches the service and its
# graceful shutdown runs; tini also reaps zombies. test/production/signal.test.ts starts this CMD the
# same way (tini as PID 1 in its own PID namespace) and sends it SIGTERM.
#
# The image runs production mode only (RPC_URL, MAKER_KEYPAIR, REDIS_URL): the paper setup's local
# chain (LiteSVM) is a development dependency and is not in the image; without RPC_URL the start stops
# with a line saying so. Use `npm start` on a checkout for the paper setup.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/build.mjs
COPY config ./config
COPY src ./src
COPY pricing ./pricing
COPY inventory ./inventory
COPY amounts ./amounts
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Generated state (the advertised-list file, a paper key) goes here; the service runs as `node`.
RUN mkdir -p /app/data && chown node:node /app/data
ENV DATA_DIR=/app/data PORT=8080
USER node
# 8080: the operator's listener; 8081: operations (/metrics, /admin), bound to 127.0.0.1 unless
# ADMIN_HOST says otherwise (docker-compose.yml publishes it on the host's loopback only).
EXPOSE 8080 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
