# Quarry's container image (docs/DEPLOY.md).
#
#   docker build -t quarry .                                     # embedded DuckDB (the default engine)
#   docker build --build-arg WITH_CHDB=true -t quarry:chdb .     # also embedded ClickHouse (chDB)
#   npm run image                                                # the same with podman, without a registry
#
# BASE_IMAGE is any Debian-bookworm-like image with Node.js 20 and npm on the PATH; `npm run image`
# makes one from Debian packages where the official image cannot be pulled (scripts/image/base.ts).
# With podman's vfs storage every stage and step is a full copy of the image, so they are few: two
# stages of the base, no STOPSIGNAL (SIGTERM is the default), and the image is the base plus four
# layers.
ARG BASE_IMAGE=node:20-bookworm-slim

# The application's files, apart from its dependencies.
FROM scratch AS source
COPY package.json tsconfig.json /app/
COPY src /app/src
# `npm run import-logflare` (docs/DEPLOY.md) works inside the container too.
COPY scripts/import-logflare.ts scripts/build.mjs /app/scripts/

# Production dependencies only, exactly as package-lock.json pins them: chDB, a devDependency, stays
# out unless WITH_CHDB=true, which adds it at package-lock.json's version for QUARRY_ENGINE=clickhouse
# CLICKHOUSE_URL=chdb: (about 550 MB more; package.json lists it as a dependency for that install only).
# Behind a TLS-inspecting proxy, give npm the proxy's CA bundle as the build secret `npm_ca`
# (`--secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt`); it is not kept in the image. npm's
# download cache is a cache mount, kept by the builder between builds and not in the image.
FROM ${BASE_IMAGE} AS deps
ARG WITH_CHDB=false
COPY package.json package-lock.json /app/
RUN --mount=type=secret,id=npm_ca,required=false \
    --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi \
 && cd /app \
 && npm ci --omit=dev --no-audit --no-fund \
 && if [ "$WITH_CHDB" = true ]; then \
      cp package.json /tmp/package.json \
   && node -e "const fs = require('node:fs'); const p = JSON.parse(fs.readFileSync('package.json', 'utf8')); p.dependencies.chdb = p.devDependencies.chdb; delete p.devDependencies; fs.writeFileSync('package.json', JSON.stringify(p))" \
   && npm install --omit=dev --no-save --no-audit --no-fund \
   && mv /tmp/package.json package.json \
   && node -e "require('chdb')"; \
    fi
# The compiled service, what `npm start` runs (scripts/build.mjs: src/ → dist/, about a second).
COPY --from=source /app /app
RUN cd /app && node scripts/build.mjs --quiet

FROM ${BASE_IMAGE} AS runtime
# A user of its own; /data, the volume, is the only place it writes (besides /tmp).
RUN groupadd --system --gid 10001 quarry \
 && useradd --system --uid 10001 --gid quarry --create-home --home-dir /home/quarry --shell /usr/sbin/nologin quarry \
 && mkdir -p /data && chown quarry:quarry /data && chmod 0750 /data
WORKDIR /app
# Every setting of README.md's table is read from the environment, as outside a container.
ENV HOST=0.0.0.0 \
    PORT=4000 \
    DATA_DIR=/data
EXPOSE 4000
VOLUME ["/data"]
USER quarry
# No curl in the image: node asks /health itself (200 once the service can ingest and query).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "const h = process.env.HOST || '127.0.0.1'; const host = h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h; fetch(`http://${host}:${process.env.PORT || 4000}/health`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and handles SIGTERM (the default stop signal) itself from its first moments
# (src/main.ts, compiled to dist/src/main.js): in-flight requests finish, the data is flushed, exit 0. No init process is needed.
CMD ["node", "dist/src/quarry.mjs"]
# Dependencies first: a change of the sources alone leaves that layer as it was.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/dist ./dist
COPY --from=source /app ./
