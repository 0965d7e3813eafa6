#!/usr/bin/env bash
# A Docker engine of our own for the image and compose tests: its own socket, data root and PID file, so it
# never touches a Docker the machine already runs.
#
#   eval "$(bash scripts/image/dockerd.sh start)"   # starts it (or finds it running); prints export DOCKER_HOST=…
#   bash scripts/image/dockerd.sh stop               # stops it by its PID
#
# Storage: overlay2, or vfs where overlay2 does not start (vfs copies every layer in full: builds are slower).
# Needs root and dockerd (Debian: apt-get install docker.io). Environment: TG_AGENT_DOCKER_ROOT (default
# /var/lib/tg-agent-docker), TG_AGENT_DOCKER_RUN (default /run/tg-agent-docker).
set -euo pipefail

say() { printf 'dockerd: %s\n' "$*" >&2; }
die() { printf 'dockerd: ERROR: %s\n' "$*" >&2; exit 1; }

DATA_ROOT="${TG_AGENT_DOCKER_ROOT:-/var/lib/tg-agent-docker}"
RUN_DIR="${TG_AGENT_DOCKER_RUN:-/run/tg-agent-docker}"
SOCKET="$RUN_DIR/docker.sock"
PIDFILE="$RUN_DIR/dockerd.pid"
LOG="$RUN_DIR/dockerd.log"
export DOCKER_HOST="unix://$SOCKET"

answers() { timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

start_with() {
  local driver="$1"
  mkdir -p "$RUN_DIR" "$DATA_ROOT"
  say "starting dockerd ($driver, data root $DATA_ROOT, socket $SOCKET)"
  setsid dockerd --storage-driver="$driver" --data-root "$DATA_ROOT" --exec-root "$RUN_DIR/exec" \
    -H "unix://$SOCKET" --pidfile "$PIDFILE" >>"$LOG" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    answers && return 0
    kill -0 $! 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}

stop() {
  [[ -s "$PIDFILE" ]] || return 0
  local pid
  pid="$(cat "$PIDFILE")"
  kill "$pid" 2>/dev/null || { rm -f "$PIDFILE"; return 0; }
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { say "stopped dockerd (pid $pid)"; return 0; }
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true
  say "dockerd (pid $pid) did not stop in 30 s; killed"
}

case "${1:-start}" in
  start)
    if ! answers; then
      [[ "$(id -u)" == 0 ]] || die "dockerd needs root"
      command -v dockerd >/dev/null 2>&1 || die "no dockerd (apt-get install docker.io)"
      if ! start_with overlay2; then
        stop
        say "overlay2 did not start (tail of $LOG below); trying vfs"
        tail -n 5 "$LOG" >&2 || true
        start_with vfs || { tail -n 20 "$LOG" >&2; die "dockerd did not start (log above: $LOG)"; }
      fi
    fi
    say "running: $(docker info --format '{{.ServerVersion}}, {{.Driver}}'), pid $(cat "$PIDFILE")"
    echo "export DOCKER_HOST=$DOCKER_HOST"
    ;;
  stop) stop ;;
  *) die "usage: dockerd.sh start|stop" ;;
esac
