#
# tg-agent: TypeScript drop-in replacement for TrustGraph's agent-manager.
#
#   docker build -t tg-agent:latest .
#   docker run --rm -e PULSAR_HOST=pulsar://pulsar:6650 -p 8000:8000 tg-agent:latest
#
# No registry? `npm run image:build` makes a base image from Debian's packages (scripts/image/debian-base.sh)
# and builds on it: `docker build --build-arg NODE_IMAGE=tg-agent-local/node:20-trixie .`
#
# Every option is a flag (appended after the image name) or an environment variable;
# `docker run --rm tg-agent:latest --help` lists them (src/settings.ts).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------------------
# Build: compile TypeScript, make sure the native transport loads, then drop dev dependencies.
FROM ${NODE_IMAGE} AS build
# auto: build the native binding from source when npm could not download its prebuilt binary; never: do not
# (the image then has the WebSocket transport only, which --transport auto, the default, takes).
ARG PULSAR_CLIENT_SOURCE_BUILD=auto
WORKDIR /app

# `npm ci` also tries the optional dependency `pulsar-client` (the native binary-protocol transport). Its
# install script downloads a prebuilt binary from archive.apache.org; where that fails npm skips the package.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# The same source build as `npm run native:build`, against libpulsar from PyPI; the library lands in
# /opt/tg-agent/native, which the runtime stage copies (the binding's rpath points there).
COPY scripts/native-build.sh ./scripts/native-build.sh
COPY scripts/native-patches ./scripts/native-patches
COPY vendor ./vendor
RUN mkdir -p /opt/tg-agent/native \
 && if node -e "require('pulsar-client')" 2>/dev/null; then \
      echo "pulsar-client: the prebuilt binding downloaded by npm loads"; \
    elif [ "$PULSAR_CLIENT_SOURCE_BUILD" = never ]; then \
      echo "pulsar-client: no prebuilt binding, and PULSAR_CLIENT_SOURCE_BUILD=never: WebSocket transport only"; \
    else \
      echo "pulsar-client: no prebuilt binding; building it from source" \
      && apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           g++ make python3 python3-pip unzip patch >/dev/null \
      && TG_AGENT_NATIVE_CACHE=/opt/tg-agent/native bash scripts/native-build.sh \
      && rm -rf /var/lib/apt/lists/*; \
    fi

COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY dev ./dev
COPY scripts ./scripts
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

# ---------------------------------------------------------------------------------------------------------
# Runtime: compiled JavaScript, production node_modules and package.json only, as a non-root user.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app

RUN groupadd --system --gid 10001 tgagent \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin tgagent

# Owned by root and read-only for the service user (works with a read-only root filesystem).
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /opt/tg-agent /opt/tg-agent

USER 10001:10001

# Build-time report, never a failure: did the native pulsar-client binding install and load?
RUN node -e "try { require('pulsar-client'); console.log('pulsar-client native binding: loaded (TG_AGENT_TRANSPORT=native available)'); } catch (e) { console.log('pulsar-client native binding: NOT available, only the websocket transport will work (' + String(e && e.message).split('\n')[0] + ')'); }"

# Metrics, health and tool listing (/metrics, /healthz, /readyz, /tools); TrustGraph's metrics port.
EXPOSE 8000

# Slim images have no curl: ask node. Follows TG_AGENT_METRICS_PORT when it is set.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.TG_AGENT_METRICS_PORT || 8000) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "dist/src/main.js"]
