#!/usr/bin/env bash
# npm run image:build — build the tg-agent image with whatever this machine can reach.
#
#   NODE_IMAGE set            → built on it (`--build-arg NODE_IMAGE=$NODE_IMAGE`)
#   a registry answers        → built on node:20-bookworm-slim, the Dockerfile's default
#   no registry               → built on tg-agent-local/node:20-trixie, made from Debian's packages
#                               (scripts/image/debian-base.sh; needs root and debootstrap)
#
# Tag: TG_AGENT_IMAGE (default tg-agent:local), printed on the last line. Extra arguments go to `docker build`
# (e.g. --build-arg PULSAR_CLIENT_SOURCE_BUILD=never). The build's log says which transports the image has.
set -euo pipefail

say() { printf 'image:build: %s\n' "$*" >&2; }
die() { printf 'image:build: ERROR: %s\n' "$*" >&2; exit 1; }

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TAG="${TG_AGENT_IMAGE:-tg-agent:local}"
DEFAULT_BASE="node:20-bookworm-slim"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || die "no Docker engine answers (docker version failed); start dockerd first"

base="${NODE_IMAGE:-}"
if [[ -z "$base" ]]; then
  if docker image inspect "$DEFAULT_BASE" >/dev/null 2>&1 || docker pull -q "$DEFAULT_BASE" >/dev/null 2>&1; then
    base="$DEFAULT_BASE"
  else
    say "cannot pull $DEFAULT_BASE (no registry reachable?); making a base image from Debian's packages"
    base="$(bash "$REPO_ROOT/scripts/image/debian-base.sh" node | tail -n1)"
  fi
fi

say "building $TAG on $base"
started=$SECONDS
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# The classic builder: it needs no BuildKit frontend image from a registry.
if ! DOCKER_BUILDKIT=0 docker build --build-arg "NODE_IMAGE=$base" -t "$TAG" "$@" "$REPO_ROOT" >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  die "docker build failed (last lines above)"
fi
grep -E '^pulsar-client: ' "$log" | sed 's/^/image:build: /' >&2 || true
# Asked of the image itself, so a build taken from the cache says it too.
if docker run --rm --entrypoint node "$TAG" -e "require('pulsar-client')" >/dev/null 2>&1; then
  say "transports in the image: websocket and native (the pulsar-client binding loads)"
else
  say "transports in the image: websocket only (the pulsar-client binding does not load; --transport auto takes websocket)"
fi
say "built $TAG in $((SECONDS - started)) s, $(docker image inspect --format '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1 / 1000000}')"
echo "$TAG"
