#!/usr/bin/env bash
# Make (or reuse) the Python venv with TrustGraph's own pieces that the integration tests run:
# trustgraph-base, trustgraph-flow and trustgraph-cli (TrustGraph's release below, --no-deps) plus the few
# packages those pieces import (dev/trustgraph/requirements.txt), all from PyPI with pip.
#
# The venv lives in ${TG_AGENT_CACHE:-~/.cache/tg-agent}/trustgraph-<version>-venv and is keyed by the
# requirements: a stamp file holds their hash, so a second run with nothing changed returns at once.
# Prints the venv's directory on stdout (the last line); everything else goes to stderr.
# Exits non-zero, saying why, when the venv cannot be made (no python3 >= 3.10, no venv module, pip fails).
set -euo pipefail

TRUSTGRAPH_VERSION=2.11.1
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIREMENTS="$ROOT/dev/trustgraph/requirements.txt"
CACHE="${TG_AGENT_CACHE:-${HOME:-/root}/.cache/tg-agent}"
VENV="${TG_VENV:-$CACHE/trustgraph-$TRUSTGRAPH_VERSION-venv}"
TG_PACKAGES=("trustgraph-base==$TRUSTGRAPH_VERSION" "trustgraph-flow==$TRUSTGRAPH_VERSION" "trustgraph-cli==$TRUSTGRAPH_VERSION")

say() { printf 'trustgraph-venv: %s\n' "$*" >&2; }
die() { printf 'trustgraph-venv: ERROR: %s\n' "$*" >&2; exit 1; }

apt_install() {
  local SUDO=()
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need $* but am not root and have no sudo; install them by hand"
    SUDO=(sudo)
  fi
  say "installing $* with apt-get"
  "${SUDO[@]}" apt-get update >&2 || die "apt-get update failed; install $* by hand"
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends "$@" >&2 ||
    die "apt-get could not install $*; install them by hand"
}

PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  [[ "$PYTHON" == python3 ]] || die "no $PYTHON on PATH"
  apt_install python3 python3-venv
fi
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  die "$("$PYTHON" --version 2>&1) is too old: TrustGraph $TRUSTGRAPH_VERSION needs Python 3.10+"

key="$( { echo "${TG_PACKAGES[*]}"; "$PYTHON" --version 2>&1; cat "$REQUIREMENTS"; } | sha256sum | cut -c1-16)"
stamp="$VENV/.tg-agent-stamp"
ready() { [[ -x "$VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$key" ]]; }
if ready; then
  echo "$VENV"
  exit 0
fi

# Two test runs on one machine may both find no venv: the second waits for the first, then reuses its venv.
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
if ready; then
  echo "$VENV"
  exit 0
fi

if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  # Debian splits the venv module's pip bootstrap into python3-venv (python3.11-venv).
  apt_install python3-venv
fi

say "making $VENV (TrustGraph $TRUSTGRAPH_VERSION; key $key)"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" >&2 || die "python3 -m venv $VENV failed"
pip=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input)
"${pip[@]}" install --quiet -r "$REQUIREMENTS" >&2 || die "pip could not install $REQUIREMENTS (is PyPI reachable?)"
# Their declared dependencies are left out on purpose (see the requirements file), so pip's resolver would
# list each one as missing: that check is what --no-deps and the import test below replace.
"${pip[@]}" install --quiet --no-deps "${TG_PACKAGES[@]}" 2>&1 | grep -v -e 'which is not installed' -e "dependency resolver does not currently" >&2 || true

# Prove the pieces the tests run import, before saying the venv is ready.
"$VENV/bin/python" - "$TRUSTGRAPH_VERSION" >&2 <<'PY' || die "TrustGraph's pieces are not installed or do not import (see above; is PyPI reachable?)"
import sys
from importlib.metadata import version
for package in ("trustgraph-base", "trustgraph-flow", "trustgraph-cli"):
    assert version(package) == sys.argv[1], f"{package} {version(package)} installed, {sys.argv[1]} wanted"
import trustgraph.base, trustgraph.messaging            # serializer, translators, Pulsar backend
import trustgraph.agent.mcp_tool.service                # mcp-tool
import trustgraph.agent.orchestrator.service            # agent-orchestrator
import trustgraph.gateway.service, trustgraph.iam.noauth # api-gateway, no-auth-svc
import trustgraph.cli.invoke_agent                      # tg-invoke-agent
import pulsar
assert pulsar.__version__ == "3.13.0", pulsar.__version__
PY
for command in mcp-tool agent-orchestrator api-gateway no-auth-svc tg-invoke-agent; do
  [[ -x "$VENV/bin/$command" ]] || die "the venv has no $command command"
done

echo "$key" >"$stamp"
say "ready: $VENV"
echo "$VENV"
