# syntax=docker/dockerfile:1
# stackd: multi-stage build. The build stage compiles better-sqlite3 from source and the
# TypeScript; the runtime stage carries only production dependencies and dist/.

ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /app
# Toolchain for better-sqlite3's native build (node-gyp).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY bin ./bin
COPY test ./test
COPY bench ./bench
ARG GIT_COMMIT=unknown
ENV STACKD_GIT_COMMIT=${GIT_COMMIT}
# npm ci runs `prepare`, which builds dist/ (tsc + build-info.json).
RUN npm ci && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    STACKD_HOST=0.0.0.0 \
    STACKD_PORT=8080 \
    STACKD_DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/bin ./bin
# The image's code is read-only to the service user; only /data is writable.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# A non-loopback bind needs a token: pass STACKD_TOKEN (or STACKD_TOKEN_FILE with a mounted secret).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.STACKD_PORT || 8080) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/stackd"]
CMD ["serve"]
