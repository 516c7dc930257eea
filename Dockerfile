# syntax=docker/dockerfile:1
#
# One image for the gateway, the indexer and the notifier; the command picks the service:
#   docker run event-broker                                   # gateway (the default CMD)
#   docker run event-broker services/indexer/src/main.ts
#   docker run event-broker services/notifier/src/main.ts
# Node 24 runs the TypeScript sources directly (type stripping), so there is no build step and
# the image carries only production dependencies. admin/getVersion's git facts are fixed at
# build time (the image has no git): pass the GIT_* build args, or run `npm run build-info`
# before `docker build` so build-info.json is in the context. See docs/deployment.md.

ARG NODE_IMAGE=node:24-bookworm-slim

# Only the workspace manifests, so the dependency layer below is rebuilt when a package.json
# changes and not on every source edit (BuildKit compares the copied files, not this stage).
FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY packages packages
COPY services services
RUN find packages services -mindepth 2 -maxdepth 2 ! -name package.json -exec rm -rf {} +

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=manifests /app/ ./
# --omit=dev also leaves out the `node` dev dependency: the base image already is Node 24.
# npm ci refuses a lockfile that lacks entries for other platforms' optional packages (one
# written against a registry without them, e.g. Biome's non-Linux binaries, all dev-only);
# `npm install --no-save` then installs the same locked versions and leaves the lockfile alone.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --no-audit --no-fund \
    || npm install --omit=dev --no-save --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    HEALTH_PORT=9000
WORKDIR /app
COPY --from=deps /app/ ./
COPY . .
ARG GIT_COMMIT_HASH=""
ARG GIT_BRANCH=""
ARG GIT_COMMIT_TIMESTAMP=""
# --keep: a build-info.json made on the host wins over git, which the image does not have.
RUN node scripts/build-info.ts --keep
# The files stay root-owned, so the service cannot alter its own code; it writes nothing to /app.
USER node
EXPOSE 8080 9000
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.ts"]
STOPSIGNAL SIGTERM
# The tracing preload starts OpenTelemetry only when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise
# it imports nothing (docs/operations.md, Traces).
ENTRYPOINT ["node", "--disable-warning=TimeoutNegativeWarning", "--import", "./packages/telemetry/src/preload.ts"]
CMD ["services/gateway/src/main.ts"]
