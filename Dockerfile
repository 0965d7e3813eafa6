# syntax=docker/dockerfile:1
#
# tg-agent: TypeScript drop-in replacement for TrustGraph's agent-manager.
#
#   docker build -t tg-agent:latest .
#   docker run --rm -e PULSAR_HOST=pulsar://pulsar:6650 -p 8000:8000 tg-agent:latest
#
# Every option is a flag (appended after the image name) or an environment variable;
# `docker run --rm tg-agent:latest --help` lists them (src/settings.ts).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------------------
# Build: compile TypeScript, then drop dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# `npm ci` also tries the optional dependency `pulsar-client` (the native binary-protocol transport,
# TG_AGENT_TRANSPORT=native). Its install script downloads a prebuilt N-API binary from
# archive.apache.org, which works here because image builds have network access. If that download fails
# (no network, unsupported platform), npm skips the optional package and the build goes on: the image then
# only has the WebSocket transport, which needs no native code (--transport auto, the default, then takes it).
# `npm run native:build` is not needed here: it is for machines that cannot download the prebuilt binary.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

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

USER 10001:10001

# Build-time report, never a failure: did the native pulsar-client binding install and load?
RUN node -e "try { require('pulsar-client'); console.log('pulsar-client native binding: loaded (TG_AGENT_TRANSPORT=native available)'); } catch (e) { console.log('pulsar-client native binding: NOT available, only the websocket transport will work (' + String(e && e.message).split('\n')[0] + ')'); }"

# Metrics, health and tool listing (/metrics, /healthz, /readyz, /tools); TrustGraph's metrics port.
EXPOSE 8000

# Slim images have no curl: ask node. Follows TG_AGENT_METRICS_PORT when it is set.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.TG_AGENT_METRICS_PORT || 8000) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "dist/src/main.js"]
