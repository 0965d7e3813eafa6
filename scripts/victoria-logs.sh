#!/usr/bin/env bash
# Build (or reuse) VictoriaLogs, the Apache-2.0 log store that accepts Loki's push API
# (/insert/loki/api/v1/push): the Loki-compatible server the integration tests push the agent's logs to
# (Loki itself is AGPL). Built from the Go module proxy with `go install` (Go 1.26+; Debian's golang-go is
# installed when no go is on PATH) into ${TG_AGENT_CACHE:-~/.cache/tg-agent}/victoria-logs-<version>/.
# A second run finds the binary and returns at once. Prints the binary's path on stdout (the last line).
set -euo pipefail

VERSION=v1.52.2
CACHE="${TG_AGENT_CACHE:-${HOME:-/root}/.cache/tg-agent}"
DIR="$CACHE/victoria-logs-$VERSION"
BIN="$DIR/victoria-logs"

say() { printf 'victoria-logs: %s\n' "$*" >&2; }
die() { printf 'victoria-logs: ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -x "$BIN" ]]; then
  echo "$BIN"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  SUDO=()
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need Go 1.26+ (golang-go) but am not root and have no sudo"
    SUDO=(sudo)
  fi
  say "installing golang-go with apt-get"
  "${SUDO[@]}" apt-get update >&2
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends golang-go >&2
fi

mkdir -p "$DIR"
say "building github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@$VERSION with $(go version)"
GOBIN="$DIR" CGO_ENABLED=0 go install "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@$VERSION" >&2 ||
  die "go install failed (is the Go module proxy reachable? does this Go satisfy the module's go line?)"
[[ -x "$BIN" ]] || die "go install finished but $BIN is missing"
echo "$BIN"
