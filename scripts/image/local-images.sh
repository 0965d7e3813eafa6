#!/usr/bin/env bash
# Local stand-ins for the registry images docker-compose.yml names, built from Debian's packages and Maven
# Central alone, for machines with no image registry:
#
#   tg-agent-local/pulsar:4.0.7       Pulsar standalone from the Maven Central jars (tools/pulsar-standalone)
#                                     on a Debian JRE (deploy/local-images/pulsar.Dockerfile)
#   tg-agent-local/prometheus:trixie  Debian's prometheus package
#
# deploy/local-images/docker-compose.local.yml swaps them (and the tg-agent image from scripts/image/build.sh)
# into docker-compose.yml. Grafana has no Debian package and stays out. Needs root, debootstrap, Java 17+ and
# Maven (to resolve the jars, cached in .pulsar/ and ~/.m2) and a running Docker engine.
set -euo pipefail

say() { printf 'image:local: %s\n' "$*" >&2; }
die() { printf 'image:local: ERROR: %s\n' "$*" >&2; exit 1; }

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PULSAR_TAG="tg-agent-local/pulsar:4.0.7"
SOURCES="$REPO_ROOT/tools/pulsar-standalone"

jre="$(bash "$REPO_ROOT/scripts/image/debian-base.sh" jre | tail -n1)"
bash "$REPO_ROOT/scripts/image/debian-base.sh" prometheus | tail -n1 >/dev/null

classpath="$(bash "$SOURCES/pulsar.sh" classpath | tail -n1)" || die "could not resolve Pulsar's classpath (tools/pulsar-standalone/pulsar.sh classpath)"
[[ -s "$classpath" ]] || die "no classpath in $classpath"

# The image is rebuilt only when its inputs change: the jar list, the config, the Dockerfile and the JRE base.
key="$( (cat "$classpath" "$SOURCES/standalone.conf" "$SOURCES/log4j2.xml" "$REPO_ROOT/deploy/local-images/pulsar.Dockerfile"
  docker image inspect --format '{{.Id}}' "$jre") | sha256sum | cut -c1-12)"
if [[ "$(docker image inspect --format '{{index .Config.Labels "tg-agent.local-key"}}' "$PULSAR_TAG" 2>/dev/null)" != "$key" ]]; then
  context="$(mktemp -d)"
  trap 'rm -rf "$context"' EXIT
  mkdir "$context/lib"
  tr ':' '\n' <"$classpath" | xargs -I{} cp {} "$context/lib/"
  # Listen on every interface of the container; the advertised address is the entrypoint's argument.
  sed -e 's/^bindAddress=.*/bindAddress=0.0.0.0/' -e '/^advertisedAddress=/d' "$SOURCES/standalone.conf" >"$context/standalone.conf"
  cp "$SOURCES/log4j2.xml" "$context/"
  cp "$REPO_ROOT/deploy/local-images/pulsar.Dockerfile" "$context/Dockerfile"
  started=$SECONDS
  DOCKER_BUILDKIT=0 docker build -q --build-arg "JRE_IMAGE=$jre" --label "tg-agent.local-key=$key" -t "$PULSAR_TAG" "$context" >/dev/null ||
    die "docker build of $PULSAR_TAG failed"
  say "built $PULSAR_TAG in $((SECONDS - started)) s"
fi
say "$PULSAR_TAG and tg-agent-local/prometheus:trixie are ready"
