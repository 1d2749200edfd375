# dashgate's image: `docker build -t dashgate .`, then see docker-compose.yml or docs/operations.md.
#
# The base is the Node that package.json pins (the `node` devDependency; MikroORM 7 needs 22.17+),
# on Debian, whose glibc the embedded PostgreSQL's binaries need. test/system/image-install.test.ts
# performs this file's steps outside Docker (the build stage's COPY and RUN, the runtime stage's
# COPY --from=build, its ENV, USER, CMD and HEALTHCHECK) and checks that the server starts and answers.

FROM node:22.23.3-bookworm-slim AS build
WORKDIR /app
# Production dependencies only; the build (bin/build.js) bundles with esbuild, one of them.
# Installed before the sources are copied, so that this layer is reused until the lock changes;
# the dependencies' own install scripts run through `npm rebuild` (the project's `prepare`, the
# build, needs the sources and runs below).
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm rebuild
COPY bin/ bin/
COPY src/ src/
RUN node bin/build.js && mkdir data

FROM node:22.23.3-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json package.json
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY conf/ conf/
# The embedded PostgreSQL (when no [database] is configured) and an instance's generated key live here.
COPY --from=build --chown=node:node /app/data data
VOLUME /app/data
USER node
EXPOSE 3000
# The flags `npm start` runs the server with (package.json); dist/ is built, so no build step at start.
CMD ["node", "--experimental-async-context-frame", "--max-semi-space-size=8", "--heap-growing-percent=100", "dist/main.js"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.GF_SERVER_HTTP_PORT || 3000}/api/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
