#!/usr/bin/env bash
# Make a local base image from Debian's packages alone, for machines that reach Debian's mirror but no image
# registry.
#
#   bash scripts/image/debian-base.sh node        → tg-agent-local/node:20-trixie   (nodejs 20 + npm)
#   bash scripts/image/debian-base.sh jre         → tg-agent-local/jre:trixie       (OpenJDK 21, for Pulsar)
#   bash scripts/image/debian-base.sh prometheus  → tg-agent-local/prometheus:trixie
#
# Prints the tag on its last line. `debootstrap --variant=minbase trixie`, the machine's CA bundle copied in (so
# npm, pip and apt inside trust whatever the machine trusts: a TLS-intercepting proxy's CA too), the kind's
# packages installed with apt-get in a chroot, then `docker import`. The root filesystem is cached as a tarball
# under ~/.cache/tg-agent/images, keyed by the recipe, the package list and the CA bundle, so a second run only
# imports it (or does nothing when the tagged image already carries the key). Needs root, debootstrap and a
# running Docker engine.
#
# Environment: TG_AGENT_IMAGE_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/tg-agent/images),
#              DEBIAN_MIRROR (default http://deb.debian.org/debian), CA_BUNDLE (default /etc/ssl/certs/ca-certificates.crt)
set -euo pipefail

say() { printf 'image:base: %s\n' "$*" >&2; }
die() { printf 'image:base: ERROR: %s\n' "$*" >&2; exit 1; }

KIND="${1:-node}"
case "$KIND" in
  node) PACKAGES="nodejs npm ca-certificates"; TAG="tg-agent-local/node:20-trixie" ;;
  jre) PACKAGES="openjdk-21-jre-headless ca-certificates curl procps"; TAG="tg-agent-local/jre:trixie" ;;
  prometheus) PACKAGES="prometheus ca-certificates"; TAG="tg-agent-local/prometheus:trixie" ;;
  *) die "unknown kind '$KIND' (node, jre or prometheus)" ;;
esac

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CA_BUNDLE="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
CACHE="${TG_AGENT_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tg-agent/images}"
[[ -f "$CA_BUNDLE" ]] || die "no CA bundle at $CA_BUNDLE (set CA_BUNDLE to the PEM file this machine trusts)"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || die "no Docker engine answers (docker version failed); start dockerd first"

# What the root filesystem is made of; bump RECIPE when the steps below change what they make.
RECIPE=1
KEY="$( (echo "$RECIPE $KIND $PACKAGES $MIRROR"; cat "$CA_BUNDLE") | sha256sum | cut -c1-12)"
if [[ "$(docker image inspect --format '{{index .Config.Labels "tg-agent.base-key"}}' "$TAG" 2>/dev/null)" == "$KEY" ]]; then
  say "$TAG is current (key $KEY)"
  echo "$TAG"
  exit 0
fi

mkdir -p "$CACHE"
TARBALL="$CACHE/$KIND-trixie-$KEY.tar.gz"
exec 9>"$TARBALL.lock"
flock 9
if [[ ! -s "$TARBALL" ]]; then
  [[ "$(id -u)" == 0 ]] || die "debootstrap needs root"
  command -v debootstrap >/dev/null 2>&1 || die "no debootstrap (apt-get install debootstrap)"
  ROOT="$(mktemp -d "${TMPDIR:-/tmp}/tg-agent-rootfs.XXXXXX")"
  cleanup() { umount "$ROOT/proc" 2>/dev/null || true; rm -rf "$ROOT"; }
  trap cleanup EXIT
  started=$SECONDS
  # The minbase root filesystem is the same for every kind: made once, then unpacked for each.
  MINBASE="$CACHE/minbase-trixie-$( (echo "$RECIPE $MIRROR") | sha256sum | cut -c1-12).tar.gz"
  exec 8>"$MINBASE.lock"
  flock 8
  if [[ -s "$MINBASE" ]]; then
    say "unpacking the cached minbase $MINBASE"
    tar -C "$ROOT" -xzf "$MINBASE"
  else
    say "debootstrap --variant=minbase trixie from $MIRROR"
    debootstrap --variant=minbase trixie "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 ||
      { tail -20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed (log above)"; }
    rm -f "$ROOT.debootstrap.log"
    tar -C "$ROOT" -I 'gzip -1' -cf "$MINBASE.tmp" . && mv "$MINBASE.tmp" "$MINBASE"
  fi
  flock -u 8
  echo "deb $MIRROR trixie main" >"$ROOT/etc/apt/sources.list"
  mkdir -p "$ROOT/etc/ssl/certs"
  cp "$CA_BUNDLE" "$ROOT/etc/ssl/certs/ca-certificates.crt"
  # No services start inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod +x "$ROOT/usr/sbin/policy-rc.d"
  mount -t proc proc "$ROOT/proc"
  say "apt-get install $PACKAGES"
  chroot "$ROOT" apt-get -o APT::Sandbox::User=root update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get -o APT::Sandbox::User=root install -y -qq --no-install-recommends $PACKAGES >/dev/null
  umount "$ROOT/proc"
  # The machine's bundle again: installing ca-certificates regenerated the file from Debian's list alone.
  cp "$CA_BUNDLE" "$ROOT/etc/ssl/certs/ca-certificates.crt"
  rm -f "$ROOT/usr/sbin/policy-rc.d"
  chroot "$ROOT" apt-get clean
  rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/tmp/* "$ROOT"/var/log/*.log
  tar -C "$ROOT" -I 'gzip -1' -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
  say "root filesystem made in $((SECONDS - started)) s: $TARBALL ($(du -m "$TARBALL" | cut -f1) MB)"
fi

say "importing $TARBALL as $TAG"
docker import \
  --change "LABEL tg-agent.base-key=$KEY" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' \
  "$TARBALL" "$TAG" >/dev/null
echo "$TAG"
