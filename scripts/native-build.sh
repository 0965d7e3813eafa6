#!/usr/bin/env bash
# npm run native:build — make the optional native Pulsar binding (`pulsar-client`) load on this machine.
#
# `npm ci` normally downloads a prebuilt binding from archive.apache.org. Where that host is unreachable the
# optional dependency is skipped and only the WebSocket transport works. This script builds the binding from
# its npm source instead, against libpulsar (the C++ client) taken from the `pulsar-client` PyPI wheel and the
# C++ client's public headers, then installs it as node_modules/pulsar-client.
#
#   - Does nothing when `require('pulsar-client')` already works (a machine that downloaded the prebuilt
#     binding, the Docker image).
#   - Builds once per (binding version, libpulsar version, Node ABI, CPU) into a cache directory and
#     reuses it afterwards: `npm ci` wipes node_modules, so run this script after every `npm ci`; a cached
#     build is copied back in a second.
#
# Downloads (first run only): the binding's source from the npm registry (`npm pack pulsar-client@<v>` and its
# runtime dependencies), the `pulsar-client` wheel from PyPI (~8 MB). Needs python3 with pip, unzip, g++,
# make, Node's headers (include/node next to the node binary) and the C++ client headers.
#
# Environment:
#   TG_AGENT_PULSAR_CPP_INCLUDE   C++ client 4.2.0 headers (the folder holding pulsar/c/*.h);
#                                 default <repo>/vendor/pulsar-client-cpp-4.2.0/include (kept in the repository)
#   TG_AGENT_NATIVE_CACHE         cache root (default ${XDG_CACHE_HOME:-~/.cache}/tg-agent)
#   TG_AGENT_NATIVE_REBUILD=1     ignore a cached build
#
# Patches: scripts/native-patches/pulsar-client-<binding version>.patch, when present, is applied to the
# binding's source before it is compiled (what it changes and why: the patch's comments and
# docs/benchmarks.md). The cache directory's name carries a hash of the patch, so a changed patch builds anew
# and an unpatched build elsewhere in the cache stays as it is.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

say() { printf 'native:build: %s\n' "$*" >&2; }
die() { printf 'native:build: ERROR: %s\n' "$*" >&2; exit 1; }

# The C++ client version the binding pins (its pulsar-client-cpp.txt) and the wheel that ships exactly it.
CPP_VERSION=4.2.0
WHEEL_VERSION=3.13.0

loads() {
  node -e "const p = require('pulsar-client'); if (typeof p.Client !== 'function') process.exit(1)" >/dev/null 2>&1
}

BINDING_VERSION="$(node -p "require('./package-lock.json').packages['node_modules/pulsar-client'].version")"
[[ "$BINDING_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "no pulsar-client version in package-lock.json"
NODE_ABI="$(node -p 'process.versions.modules')"
CACHE_ROOT="${TG_AGENT_NATIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tg-agent}"
PATCH="$REPO_ROOT/scripts/native-patches/pulsar-client-$BINDING_VERSION.patch"
PATCH_TAG=""
[[ -f "$PATCH" ]] && PATCH_TAG="-patch-$(sha256sum "$PATCH" | cut -c1-8)"
CACHE="$CACHE_ROOT/pulsar-client-$BINDING_VERSION-libpulsar-$CPP_VERSION-node-abi$NODE_ABI-$(uname -m)$PATCH_TAG"
TARGET="$REPO_ROOT/node_modules/pulsar-client"
# Which build an installed binding is (written by install_from_cache); absent in a prebuilt one from npm.
MARKER="$TARGET/.tg-agent-build"
# An install by an older version of this script has no marker, but its rpath points into the cache.
built_here() { [[ -f "$MARKER" ]] || grep -qF "$CACHE_ROOT/" "$TARGET/lib/binding/pulsar.node" 2>/dev/null; }

if loads && [[ "${TG_AGENT_NATIVE_REBUILD:-}" != 1 ]]; then
  if ! built_here; then
    say "pulsar-client already loads here ($(node -p "require('pulsar-client/package.json').version"), not built by this script); nothing to do"
    exit 0
  fi
  if [[ "$(cat "$MARKER" 2>/dev/null)" == "$(basename "$CACHE")" ]]; then
    say "pulsar-client $BINDING_VERSION ($(basename "$CACHE")) is installed already; nothing to do"
    exit 0
  fi
  say "node_modules/pulsar-client is another build ($(cat "$MARKER" 2>/dev/null || echo 'unmarked')); installing $(basename "$CACHE")"
fi

install_from_cache() {
  rm -rf "$TARGET.tmp.$$"
  cp -a "$CACHE/package" "$TARGET.tmp.$$"
  rm -rf "$TARGET"
  mv "$TARGET.tmp.$$" "$TARGET"
  basename "$CACHE" >"$MARKER"
  loads || die "the cached build in $CACHE does not load; rerun with TG_AGENT_NATIVE_REBUILD=1"
  say "pulsar-client $BINDING_VERSION (libpulsar $CPP_VERSION from $CACHE/lib) installed in node_modules/pulsar-client"
}

mkdir -p "$CACHE_ROOT"
# Two runs at once (two worktrees) must not build into the same directory.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE.lock"
  flock 9
fi

if [[ -f "$CACHE/package/lib/binding/pulsar.node" && "${TG_AGENT_NATIVE_REBUILD:-}" != 1 ]]; then
  say "using the cached build in $CACHE"
  install_from_cache
  exit 0
fi

# --- what the build needs -----------------------------------------------------------------------------------
HEADERS="${TG_AGENT_PULSAR_CPP_INCLUDE:-$REPO_ROOT/vendor/pulsar-client-cpp-$CPP_VERSION/include}"
[[ -f "$HEADERS/pulsar/c/message.h" ]] ||
  die "no C++ client $CPP_VERSION headers at $HEADERS (expected pulsar/c/message.h); set TG_AGENT_PULSAR_CPP_INCLUDE to the include/ folder of apache/pulsar-client-cpp v$CPP_VERSION"
NODE_PREFIX="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
[[ -f "$NODE_PREFIX/include/node/node_api.h" ]] ||
  die "no Node headers at $NODE_PREFIX/include/node (node-gyp would try to download them); install Node with its headers (e.g. the nodesource nodejs package)"
missing=()
python3 -m pip --version >/dev/null 2>&1 || missing+=("python3 + pip (apt-get install python3-pip)")
for tool in unzip g++ make patch; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
((${#missing[@]} == 0)) || die "missing build tools: ${missing[*]}"

WORK="$CACHE.build.$$"
rm -rf "$WORK"
mkdir -p "$WORK/lib"
trap 'rm -rf "$WORK"' EXIT
started=$SECONDS

say "downloading libpulsar $CPP_VERSION (PyPI wheel pulsar-client==$WHEEL_VERSION)"
python3 -m pip download --quiet --no-deps --only-binary :all: "pulsar-client==$WHEEL_VERSION" -d "$WORK/wheel" >&2
unzip -q "$WORK"/wheel/pulsar_client-"$WHEEL_VERSION"-*.whl 'pulsar_client.libs/*' -d "$WORK/wheel"
shopt -s nullglob
libs=("$WORK"/wheel/pulsar_client.libs/libpulsar-*.so)
shopt -u nullglob
((${#libs[@]} == 1)) || die "expected one libpulsar-*.so in the wheel, found ${#libs[@]}"
cp "${libs[0]}" "$WORK/lib/"
# The library's SONAME stays libpulsar-<hash>.so; the binding links -lpulsar.
ln -sf "$(basename "${libs[0]}")" "$WORK/lib/libpulsar.so"

say "downloading the pulsar-client $BINDING_VERSION source (npm registry)"
(cd "$WORK" && npm pack --silent "pulsar-client@$BINDING_VERSION" >/dev/null && tar xzf "pulsar-client-$BINDING_VERSION.tgz")
grep -q "CPP_CLIENT_VERSION=$CPP_VERSION" "$WORK/package/pulsar-client-cpp.txt" ||
  die "pulsar-client $BINDING_VERSION pins another C++ client than $CPP_VERSION ($(cat "$WORK/package/pulsar-client-cpp.txt")); update CPP_VERSION/WHEEL_VERSION here"
if [[ -n "$PATCH_TAG" ]]; then
  say "applying $(basename "$PATCH")"
  (cd "$WORK/package" && patch --quiet -p1 --forward <"$PATCH") || die "$PATCH does not apply to pulsar-client $BINDING_VERSION"
fi
(cd "$WORK/package" && npm install --silent --ignore-scripts --omit=dev --no-audit --no-fund --no-package-lock >&2)

# The rpath points at the cache, where the library stays (node_modules may be wiped; the cache is not).
say "building the binding (a few minutes on 2 cores)"
(
  cd "$WORK/package"
  CXXFLAGS="-I$HEADERS" LDFLAGS="-L$CACHE/lib -L$WORK/lib -Wl,-rpath,$CACHE/lib" \
    npx --no-install node-pre-gyp rebuild --build-from-source "--nodedir=$NODE_PREFIX" >"$WORK/build.log" 2>&1
) || { tail -n 40 "$WORK/build.log" >&2; die "the build failed (last lines above)"; }
rm -rf "$WORK/package/build/Release/obj.target"

rm -rf "$CACHE"
mkdir -p "$CACHE"
mv "$WORK/lib" "$WORK/package" "$CACHE/"
# The install script's second step: the CA bundle the binding uses when no tlsTrustCertsFilePath is given.
(cd "$CACHE/package" && node GenCertFile.js) || die "GenCertFile.js failed in $CACHE/package"
say "built in $((SECONDS - started)) s -> $CACHE"
install_from_cache
