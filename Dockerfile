# syntax=docker/dockerfile:1
# Image of mls, the model log shipper. See docs/operating.md.
#
#   docker build -t model-log-shipper .
#   docker run -d --name mls \
#     -v mls-state:/var/lib/mls \
#     -v "$PWD/mls.yaml:/etc/mls/config.yaml:ro" \
#     --env-file mls.env -p 127.0.0.1:9464:9464 model-log-shipper
#
# The same image runs the simulator of the service: `docker run ... model-log-shipper simulate`.

ARG NODE_IMAGE=node:24-bookworm-slim

# ---------------------------------------------------------------------------------------
# build: compile TypeScript, then drop the development dependencies.
# better-sqlite3 ships prebuilt Node-API binaries for linux x64/arm64 (glibc and musl)
# inside its npm package, and install scripts are skipped, so no compiler toolchain is
# needed here.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json ./
# --ignore-scripts: the `prepare` script builds, and the sources are not copied yet.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY tsconfig.json ./
COPY src/ ./src/
COPY config/ ./config/
RUN npm run build
RUN npm prune --omit=dev --ignore-scripts

# ---------------------------------------------------------------------------------------
# runtime: production dependencies, the compiled code and the example configs only.
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 mls \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/mls --no-create-home --shell /usr/sbin/nologin mls \
 && mkdir -p /var/lib/mls /var/log/mls /etc/mls \
 && chown 10001:10001 /var/lib/mls /var/log/mls \
 && chmod 0700 /var/lib/mls /var/log/mls
WORKDIR /app
# No NODE_OPTIONS here: the mls executable's #! line sets the memory flags, and a
# NODE_OPTIONS given to the container (docker run -e, the StatefulSet) adds to them, its
# values winning (docs/operating.md, "Memory and V8 flags").
ENV NODE_ENV=production
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules/ ./node_modules/
COPY --from=build /app/dist/ ./dist/
COPY --from=build /app/config/ ./config/
# (MLS_COMPILE_CACHE=off: the check leaves no compile cache in root's home in the image.)
RUN ln -s /app/dist/cli/main.js /usr/local/bin/mls && MLS_COMPILE_CACHE=off mls --version
USER 10001:10001
# The state file (checkpoints, journal, sink cursors): keep it on a volume.
VOLUME ["/var/lib/mls"]
# The admin server (/metrics, /healthz, /readyz, /status) when admin.listen is 0.0.0.0:9464.
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]
# tini is PID 1: it forwards SIGTERM/SIGHUP to mls and reaps zombies.
ENTRYPOINT ["tini", "--", "mls"]
CMD ["run", "--config", "/etc/mls/config.yaml"]
