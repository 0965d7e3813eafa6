#!/usr/bin/env bash
# Local Apache Pulsar standalone broker from Maven Central jars (no Docker, no tarball).
#
#   pulsar.sh start    resolve the classpath (cached), start a broker with a fresh data dir, wait until the
#                      admin API and the WebSocket service answer, create tenant tg + namespaces, print URLs
#   pulsar.sh stop     stop the broker this script started (recorded pid only), remove its data dir
#   pulsar.sh run      start, print URLs, wait; Ctrl-C stops it   (npm run pulsar)
#   pulsar.sh status   say whether the recorded broker is running and ready
#   pulsar.sh classpath resolve the broker's jars (cached) and print the file listing them (the local image)
#   pulsar.sh topology create tenant tg + namespaces on the broker at PULSAR_WEB_PORT, as start does (safe to
#                      repeat: what exists already is kept)
#
# Environment:
#   PULSAR_BROKER_PORT     binary protocol port              (default 6650)
#   PULSAR_WEB_PORT        admin REST + WebSocket port        (default 8080)
#   PULSAR_BOOKIE_PORT     embedded bookie port; 0 = any free (default 0)
#   PULSAR_START_TIMEOUT   seconds to wait for readiness      (default 180)
#   PULSAR_ADMIN_TIMEOUT   seconds curl waits for each tenant/namespace PUT (default 20); no answer
#                          in time (HTTP 000) is tried again, up to 5 attempts
#   PULSAR_ADMIN_RETRY_PAUSE  seconds between those attempts (default 2)
#   PULSAR_LOG_LEVEL       root log level of the broker       (default INFO)
#   PULSAR_JAVA            java binary                         (default: java on PATH, or $JAVA_HOME/bin/java)
#   PULSAR_MVN             mvn binary                          (default: mvn)
#   PULSAR_JAVA_OPTS       extra JVM options
#   PULSAR_KEEP_RUN_DIR    1: stop keeps the run dir (its pulsar.log) instead of removing it (default 0)
#   PULSAR_WATCH_PID       start only: stop the broker when this process exits (used by the test harness)
#   PULSAR_AUTH            none (default) | token: token authentication with a secret key made for this run;
#                          `start` prints PULSAR_TOKEN=<a JWT for the role "admin"> (authorization stays off)
#
# State lives in <repo>/.pulsar/ (gitignored): classpath cache, one state file per web port, and a data dir
# per run (.pulsar/run-<timestamp>-<pid>/ holding metadata/, bookkeeper/, pulsar.log).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
STATE_DIR="$REPO_ROOT/.pulsar"

BROKER_PORT="${PULSAR_BROKER_PORT:-6650}"
WEB_PORT="${PULSAR_WEB_PORT:-8080}"
BOOKIE_PORT="${PULSAR_BOOKIE_PORT:-0}"
START_TIMEOUT="${PULSAR_START_TIMEOUT:-180}"
ADMIN_TIMEOUT="${PULSAR_ADMIN_TIMEOUT:-20}"
ADMIN_RETRY_PAUSE="${PULSAR_ADMIN_RETRY_PAUSE:-2}"
AUTH="${PULSAR_AUTH:-none}"
# curl arguments that authenticate (token mode), and the token itself.
AUTH_CURL=()
TOKEN=""
LOG_LEVEL="${PULSAR_LOG_LEVEL:-INFO}"
MVN="${PULSAR_MVN:-mvn}"
if [[ -n "${PULSAR_JAVA:-}" ]]; then
  JAVA="$PULSAR_JAVA"
elif [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then
  JAVA="$JAVA_HOME/bin/java"
else
  JAVA="java"
fi

HOST="127.0.0.1"
SERVICE_URL="pulsar://$HOST:$BROKER_PORT"
WEB_URL="http://$HOST:$WEB_PORT"
WS_URL="ws://$HOST:$WEB_PORT"
STATE_FILE="$STATE_DIR/broker-$WEB_PORT.state"
CLASSPATH_FILE="$STATE_DIR/classpath.txt"
CLASSPATH_KEY_FILE="$STATE_DIR/classpath.key"
MAIN_CLASS="org.apache.pulsar.PulsarStandaloneStarter"

log() { printf 'pulsar.sh: %s\n' "$*" >&2; }
die() { printf 'pulsar.sh: ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

command -v curl >/dev/null 2>&1 || die "'curl' is required but not installed"

# ---------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------

check_port_number() {
  local name="$1" value="$2" allow_zero="${3:-no}"
  [[ "$value" =~ ^[0-9]+$ ]] || die "$name must be a port number, got '$value'"
  if [[ "$allow_zero" != yes || "$value" != 0 ]]; then
    ((value >= 1 && value <= 65535)) || die "$name must be in 1..65535, got '$value'"
  fi
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_in_use() {
  (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# Describe who listens on a port, if ss can tell.
port_owner() {
  if command -v ss >/dev/null 2>&1; then
    ss -Hltnp "sport = :$1" 2>/dev/null | sed 's/^/    /' || true
  fi
}

# True when $1 is a live process running our standalone starter (guards against pid reuse).
is_our_broker() {
  local pid="$1"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/cmdline" ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$MAIN_CLASS" || return 1
  fi
  return 0
}

http_status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${AUTH_CURL[@]}" "$@" || true
}

# base64url without padding (JWT encoding).
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

# An HS256 JWT for subject $2, signed with the raw key bytes in file $1 (what the broker's
# AuthenticationProviderToken checks with tokenSecretKey=file://...).
make_token() {
  local key_hex header payload sig
  key_hex="$(od -An -v -tx1 "$1" | tr -d ' \n')"
  header="$(printf '{"alg":"HS256"}' | b64url)"
  payload="$(printf '{"sub":"%s"}' "$2" | b64url)"
  sig="$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key_hex" -binary | b64url)"
  printf '%s.%s.%s' "$header" "$payload" "$sig"
}

# Token authentication for this run: a fresh secret key and a token for the role "admin", used by this
# script, by the broker's own internal client (the WebSocket service's) and printed for the caller.
setup_token_auth() {
  local run_dir="$1"
  command -v openssl >/dev/null 2>&1 || die "PULSAR_AUTH=token needs openssl (to sign the token)"
  head -c 32 /dev/urandom >"$run_dir/secret.key"
  chmod 600 "$run_dir/secret.key"
  TOKEN="$(make_token "$run_dir/secret.key" admin)"
  AUTH_CURL=(-H "Authorization: Bearer $TOKEN")
  cat >>"$run_dir/standalone.conf" <<EOF

### --- PULSAR_AUTH=token (pulsar.sh) ---
authenticationEnabled=true
authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken
tokenSecretKey=file://$run_dir/secret.key
authorizationEnabled=false
superUserRoles=admin
brokerClientAuthenticationPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken
brokerClientAuthenticationParameters=token:$TOKEN
EOF
}

# state file: KEY=VALUE lines (PID, RUN_DIR, BROKER_PORT, WEB_PORT, WATCHDOG_PID, TOKEN)
read_state() {
  STATE_PID="" STATE_RUN_DIR="" STATE_WATCHDOG_PID="" STATE_BROKER_PORT="$BROKER_PORT"
  [[ -f "$STATE_FILE" ]] || return 1
  local key value
  while IFS='=' read -r key value; do
    case "$key" in
      PID) STATE_PID="$value" ;;
      RUN_DIR) STATE_RUN_DIR="$value" ;;
      WATCHDOG_PID) STATE_WATCHDOG_PID="$value" ;;
      BROKER_PORT) STATE_BROKER_PORT="$value" ;;
      TOKEN) TOKEN="$value" AUTH_CURL=(-H "Authorization: Bearer $value") ;;
    esac
  done <"$STATE_FILE"
  return 0
}

# Remove a run dir, but only one of ours (under $STATE_DIR, named run-*).
remove_run_dir() {
  local dir="$1"
  if [[ "${PULSAR_KEEP_RUN_DIR:-0}" == 1 && -d "$dir" ]]; then
    log "keeping $dir (PULSAR_KEEP_RUN_DIR=1): its pulsar.log is the broker's log of that run"
    return 0
  fi
  [[ -n "$dir" && "$dir" == "$STATE_DIR"/run-* && -d "$dir" ]] && rm -rf -- "$dir"
  return 0
}

# Send SIGTERM to our broker, wait up to 30 s, then SIGKILL. Never touches any other process.
kill_broker() {
  local pid="$1"
  is_our_broker "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 300; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  log "broker pid $pid did not exit within 30 s of SIGTERM; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  log "WARNING: broker pid $pid is still alive"
}

print_log_tail() {
  local logfile="$1"
  if [[ -s "$logfile" ]]; then
    printf '\n----- last 80 lines of %s -----\n' "$logfile" >&2
    tail -n 80 "$logfile" >&2
    printf -- '----- end of broker log -----\n\n' >&2
  else
    log "(broker log $logfile is empty or missing)"
  fi
}

# ---------------------------------------------------------------------------------------------------------
# classpath
# ---------------------------------------------------------------------------------------------------------

classpath_key() {
  # The classpath depends on the pom and on the settings (mirror); hash both.
  cat "$SCRIPT_DIR/pom.xml" "$SCRIPT_DIR/settings.xml" | sha256sum | cut -d' ' -f1
}

classpath_is_fresh() {
  [[ -s "$CLASSPATH_FILE" && -f "$CLASSPATH_KEY_FILE" ]] || return 1
  [[ "$(cat "$CLASSPATH_KEY_FILE")" == "$(classpath_key)" ]] || return 1
  # every jar must still exist (someone may have cleaned ~/.m2)
  local jar
  while IFS= read -r jar; do
    [[ -z "$jar" || -f "$jar" ]] || return 1
  done < <(tr ':' '\n' <"$CLASSPATH_FILE")
  return 0
}

resolve_classpath() {
  mkdir -p "$STATE_DIR"
  # Serialise concurrent resolves (two starts at once) when flock is available. The lock fd is closed
  # again before java starts, so the broker does not inherit (and hold) the lock.
  local locked=no
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$STATE_DIR/classpath.lock"
    flock 9
    locked=yes
  fi
  if ! classpath_is_fresh; then
    run_maven_resolve
  fi
  if [[ "$locked" == yes ]]; then
    flock -u 9
    exec 9>&-
  fi
}

run_maven_resolve() {
  command -v "$MVN" >/dev/null 2>&1 ||
    die "Maven ('$MVN') is not installed; it is needed once to download the Pulsar jars from Maven Central (apt-get install -y maven)"
  log "resolving org.apache.pulsar:pulsar-broker and its dependencies from Maven Central (first run downloads ~250 MB) ..."
  local started=$SECONDS tmp="$CLASSPATH_FILE.tmp.$$" mvn_log="$STATE_DIR/mvn-resolve.log"
  if ! "$MVN" -B -q -s "$SCRIPT_DIR/settings.xml" -f "$SCRIPT_DIR/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
    -Dmdep.outputFile="$tmp" -Dmdep.includeScope=runtime -DincludeScope=runtime >"$mvn_log" 2>&1; then
    rm -f "$tmp"
    cat "$mvn_log" >&2
    die "Maven could not resolve the Pulsar broker classpath (full output above and in $mvn_log)"
  fi
  [[ -s "$tmp" ]] || die "Maven produced an empty classpath ($tmp)"
  mv -f "$tmp" "$CLASSPATH_FILE"
  classpath_key >"$CLASSPATH_KEY_FILE"
  log "classpath resolved in $((SECONDS - started)) s ($(tr ':' '\n' <"$CLASSPATH_FILE" | wc -l) jars) -> $CLASSPATH_FILE"
}

# ---------------------------------------------------------------------------------------------------------
# readiness and TrustGraph topology
# ---------------------------------------------------------------------------------------------------------

# A non-persistent produce+consume round trip over the WebSocket API (proves the WS service is up).
# Uses node + ws from the repo when available; returns 0 on success, 2 when it cannot be checked.
websocket_roundtrip() {
  command -v node >/dev/null 2>&1 || return 2
  [[ -d "$REPO_ROOT/node_modules/ws" ]] || return 2
  # shellcheck disable=SC2016  # the ${...} below are JavaScript template literals
  (cd "$REPO_ROOT" && PULSAR_WS="$WS_URL" PULSAR_WS_TOKEN="$TOKEN" node --input-type=module -e '
    import WebSocket from "ws";
    const base = process.env.PULSAR_WS;
    const options = process.env.PULSAR_WS_TOKEN ? { headers: { Authorization: `Bearer ${process.env.PULSAR_WS_TOKEN}` } } : {};
    const topic = `non-persistent/public/default/pulsar-sh-ready-${process.pid}-${Date.now()}`;
    const fail = (m) => { console.error(m); process.exit(1); };
    const timer = setTimeout(() => fail("timeout"), 10000);
    const consumer = new WebSocket(`${base}/ws/v2/consumer/${topic}/ready?subscriptionType=Exclusive&subscriptionMode=NonDurable`, options);
    consumer.on("error", (e) => fail(`consumer: ${e.message}`));
    consumer.on("message", (data) => {
      const msg = JSON.parse(data.toString());
      consumer.send(JSON.stringify({ messageId: msg.messageId }));
      if (Buffer.from(msg.payload, "base64").toString() !== "ready") fail("bad payload");
      clearTimeout(timer); consumer.close(); producer.close(); process.exit(0);
    });
    let producer;
    consumer.on("open", () => {
      producer = new WebSocket(`${base}/ws/v2/producer/${topic}`, options);
      producer.on("error", (e) => fail(`producer: ${e.message}`));
      producer.on("open", () => producer.send(JSON.stringify({ payload: Buffer.from("ready").toString("base64"), context: "1" })));
      producer.on("message", (data) => { const ack = JSON.parse(data.toString()); if (ack.result !== "ok") fail(`send: ${data}`); });
    });
  ' >/dev/null 2>&1)
}

# PUT that creates an admin resource: 204 created, 409 already there. A loaded broker can take longer than
# curl's limit to answer (HTTP 000); the PUT is create-only, so trying again is safe (a creation that did
# happen answers 409 the next time).
put_created() {
  local status attempt
  for attempt in 1 2 3 4 5; do
    status="$(curl -s -o /dev/null -w '%{http_code}' --max-time "$ADMIN_TIMEOUT" "${AUTH_CURL[@]}" -X PUT \
      -H 'Content-Type: application/json' "$@" || true)"
    [[ "$status" == 000 && "$attempt" -lt 5 ]] || break
    log "PUT ${*: -1}: no answer within $ADMIN_TIMEOUT s (attempt $attempt of 5), trying again"
    sleep "$ADMIN_RETRY_PAUSE"
  done
  echo "$status"
}

# Tenant tg and namespaces flow/request/response/notify, as TrustGraph's bootstrapper (PulsarTopology) does.
create_tg_topology() {
  local clusters status
  clusters="$(curl -sf --max-time 10 "${AUTH_CURL[@]}" "$WEB_URL/admin/v2/clusters")" || die "GET /admin/v2/clusters failed"
  # PUT is create-only: 204 created, 409 already there.
  status="$(put_created --data "{\"adminRoles\":[],\"allowedClusters\":$clusters}" "$WEB_URL/admin/v2/tenants/tg")"
  [[ "$status" == 204 || "$status" == 409 ]] || die "creating tenant tg failed: HTTP $status"
  local ns body
  for ns in flow request response notify; do
    case "$ns" in
      response) body='{"retention_policies":{"retentionSizeInMB":-1,"retentionTimeInMinutes":3,"subscriptionExpirationTimeMinutes":30}}' ;;
      notify) body='{"retention_policies":{"retentionSizeInMB":-1,"retentionTimeInMinutes":3,"subscriptionExpirationTimeMinutes":5}}' ;;
      *) body='{}' ;;
    esac
    status="$(put_created --data "$body" "$WEB_URL/admin/v2/namespaces/tg/$ns")"
    [[ "$status" == 204 || "$status" == 409 ]] || die "creating namespace tg/$ns failed: HTTP $status"
  done
}

# ---------------------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------------------

cmd_start() {
  check_port_number PULSAR_BROKER_PORT "$BROKER_PORT"
  check_port_number PULSAR_WEB_PORT "$WEB_PORT"
  check_port_number PULSAR_BOOKIE_PORT "$BOOKIE_PORT" yes
  [[ "$BROKER_PORT" != "$WEB_PORT" ]] || die "PULSAR_BROKER_PORT and PULSAR_WEB_PORT must differ"
  [[ "$START_TIMEOUT" =~ ^[0-9]+$ ]] || die "PULSAR_START_TIMEOUT must be a number of seconds"
  [[ "$AUTH" == none || "$AUTH" == token ]] || die "PULSAR_AUTH must be none or token, got '$AUTH'"
  if [[ -n "${PULSAR_WATCH_PID:-}" ]] && { ! [[ "$PULSAR_WATCH_PID" =~ ^[0-9]+$ ]] || ! kill -0 "$PULSAR_WATCH_PID" 2>/dev/null; }; then
    die "PULSAR_WATCH_PID must be the pid of a running process, got '$PULSAR_WATCH_PID'"
  fi
  mkdir -p "$STATE_DIR"

  # A broker recorded for this web port?
  if read_state; then
    if is_our_broker "$STATE_PID"; then
      die "a broker started by pulsar.sh is already running on $WEB_URL (pid $STATE_PID); run 'pulsar.sh stop' first, or reuse it with PULSAR_URL=$WS_URL"
    fi
    log "removing stale state of a broker that is no longer running (pid $STATE_PID)"
    remove_run_dir "$STATE_RUN_DIR"
    rm -f "$STATE_FILE"
  fi

  # Ports must be free.
  local port name
  for name in PULSAR_WEB_PORT=$WEB_PORT PULSAR_BROKER_PORT=$BROKER_PORT PULSAR_BOOKIE_PORT=$BOOKIE_PORT; do
    port="${name#*=}" name="${name%%=*}"
    [[ "$port" == 0 ]] && continue
    if port_in_use "$port"; then
      log "port $port ($name) on $HOST is already in use:"
      port_owner "$port" >&2
      die "port $port is taken by another process; stop it or choose other ports, e.g. PULSAR_WEB_PORT=18080 PULSAR_BROKER_PORT=16650 (or point tests at an existing broker with PULSAR_URL=ws://host:port)"
    fi
  done

  # Java
  command -v "$JAVA" >/dev/null 2>&1 ||
    die "Java ('$JAVA') is not installed; the local Pulsar broker needs Java 17+ (apt-get install -y openjdk-17-jre-headless) and Maven, or set PULSAR_URL to an existing broker"
  local java_major
  java_major="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
  [[ -n "$java_major" && "$java_major" -ge 17 ]] ||
    die "Java 17 or newer is required for Pulsar 4.0 (found '${java_major:-unknown}' from $JAVA)"

  resolve_classpath

  local run_dir
  run_dir="$STATE_DIR/run-$(date +%Y%m%d-%H%M%S)-$$"
  mkdir -p "$run_dir"
  local logfile="$run_dir/pulsar.log"
  local started=$SECONDS

  local -a jvm_opts=(
    -Xms256m -Xmx1g -XX:MaxDirectMemorySize=1g -XX:+UseG1GC
    -Djava.net.preferIPv4Stack=true
    -Dio.netty.tryReflectionSetAccessible=true
    --add-opens java.base/java.io=ALL-UNNAMED
    --add-opens java.base/java.util.zip=ALL-UNNAMED
    --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/jdk.internal.misc=ALL-UNNAMED
    --add-opens java.base/sun.net=ALL-UNNAMED
    --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.platform=ALL-UNNAMED
    --add-opens java.management/sun.management=ALL-UNNAMED
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
    "-Djava.io.tmpdir=$run_dir/tmp"
    "-Dlog4j2.configurationFile=$SCRIPT_DIR/log4j2.xml"
    "-Dpulsar.log.level=$LOG_LEVEL"
    -Dpulsar.allocator.exit_on_oom=true
  )
  mkdir -p "$run_dir/tmp"
  # The starter has no port options: write this run's ports into a copy of the config.
  sed -e "s/^brokerServicePort=.*/brokerServicePort=$BROKER_PORT/" \
    -e "s/^webServicePort=.*/webServicePort=$WEB_PORT/" \
    "$SCRIPT_DIR/standalone.conf" >"$run_dir/standalone.conf"
  if [[ "$AUTH" == token ]]; then setup_token_auth "$run_dir"; fi
  if [[ "$java_major" -ge 23 ]]; then
    jvm_opts+=(--sun-misc-unsafe-memory-access=allow)
  fi
  if [[ -n "${PULSAR_JAVA_OPTS:-}" ]]; then
    # shellcheck disable=SC2206  # intentional word splitting of user-supplied options
    jvm_opts+=(${PULSAR_JAVA_OPTS})
  fi

  log "starting Pulsar standalone (web $WEB_PORT, broker $BROKER_PORT) with data in $run_dir"
  # The working dir is the run dir: the starter resolves some defaults (data/, conf/) relative to it.
  # stdin from /dev/null and all output to the log so callers' pipes are not held open.
  (
    cd "$run_dir"
    exec "$JAVA" "${jvm_opts[@]}" -cp "$(cat "$CLASSPATH_FILE")" "$MAIN_CLASS" \
      --config "$run_dir/standalone.conf" \
      --no-functions-worker --no-stream-storage \
      --advertised-address "$HOST" \
      --metadata-dir "$run_dir/metadata" \
      --bookkeeper-dir "$run_dir/bookkeeper" \
      --bookkeeper-port "$BOOKIE_PORT"
  ) </dev/null >"$logfile" 2>&1 &
  local pid=$!
  echo "$pid" >"$run_dir/pid"
  {
    echo "PID=$pid"
    echo "RUN_DIR=$run_dir"
    echo "BROKER_PORT=$BROKER_PORT"
    echo "WEB_PORT=$WEB_PORT"
    if [[ -n "$TOKEN" ]]; then echo "TOKEN=$TOKEN"; fi
  } >"$STATE_FILE"
  # Any failure or interruption (Ctrl-C, a harness timeout) before the broker is ready: do not leave a
  # half-started broker behind.
  STARTING_PID="$pid" STARTING_RUN_DIR="$run_dir" STARTUP_OK=no
  trap 'if [[ "$STARTUP_OK" != yes ]]; then fail_cleanup "$STARTING_PID" "$STARTING_RUN_DIR"; fi' EXIT
  trap 'log "interrupted during startup; stopping the broker"; exit 130' INT TERM HUP
  if [[ -n "${PULSAR_WATCH_PID:-}" ]]; then
    start_watchdog "$PULSAR_WATCH_PID" "$pid" "$run_dir"
  fi

  # Wait for the admin API, then the WebSocket service.
  local deadline=$((SECONDS + START_TIMEOUT)) admin_ready=no ws_state=""
  while ((SECONDS < deadline)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      print_log_tail "$logfile"
      die "the broker process exited during startup (log above; kept in $STATE_DIR/last-failed.log)"
    fi
    if [[ "$admin_ready" == no ]]; then
      if [[ "$(http_status "$WEB_URL/admin/v2/namespaces/public/default")" == 200 ]]; then
        admin_ready=yes
        log "admin API ready after $((SECONDS - started)) s"
        create_tg_topology
      fi
    fi
    if [[ "$admin_ready" == yes ]]; then
      ws_state=0
      websocket_roundtrip || ws_state=$?
      if [[ "$ws_state" == 0 || "$ws_state" == 2 ]]; then
        break
      fi
    fi
    sleep 1
  done
  if [[ "$admin_ready" != yes || ! ("$ws_state" == 0 || "$ws_state" == 2) ]]; then
    print_log_tail "$logfile"
    if [[ "$admin_ready" != yes ]]; then
      die "the broker did not answer GET $WEB_URL/admin/v2/namespaces/public/default within $START_TIMEOUT s (log above)"
    fi
    die "the admin API is up but a WebSocket produce/consume on $WS_URL did not work within $START_TIMEOUT s (log above)"
  fi
  [[ "$ws_state" == 2 ]] && log "node/ws not available: WebSocket round trip not checked"

  STARTUP_OK=yes
  trap - INT TERM HUP EXIT

  log "Pulsar $(pulsar_version "$run_dir") ready in $((SECONDS - started)) s (pid $pid)"
  echo "PULSAR_SERVICE_URL=$SERVICE_URL"
  echo "PULSAR_WEB_URL=$WEB_URL"
  echo "PULSAR_WS_URL=$WS_URL"
  echo "PULSAR_PID=$pid"
  echo "PULSAR_DATA_DIR=$run_dir"
  if [[ -n "$TOKEN" ]]; then echo "PULSAR_TOKEN=$TOKEN"; fi
}

pulsar_version() {
  tr ':' '\n' <"$CLASSPATH_FILE" | sed -n 's#.*/pulsar-broker-\([0-9][^/]*\)\.jar$#\1#p' | head -n1
}

fail_cleanup() {
  local pid="$1" run_dir="$2"
  kill_broker "$pid"
  cp -f "$run_dir/pulsar.log" "$STATE_DIR/last-failed.log" 2>/dev/null || true
  remove_run_dir "$run_dir"
  rm -f "$STATE_FILE"
}

# Stops the broker when the watched process (e.g. the vitest main process) goes away, even on SIGKILL.
start_watchdog() {
  local watch="$1" pid="$2" run_dir="$3"
  if ! [[ "$watch" =~ ^[0-9]+$ ]] || ! kill -0 "$watch" 2>/dev/null; then
    die "PULSAR_WATCH_PID must be the pid of a running process, got '$watch'"
  fi
  (
    trap '' INT HUP
    while kill -0 "$watch" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 2; done
    if is_our_broker "$pid"; then
      kill_broker "$pid"
      remove_run_dir "$run_dir"
      if read_state && [[ "$STATE_PID" == "$pid" ]]; then rm -f "$STATE_FILE"; fi
    fi
  ) </dev/null >/dev/null 2>&1 &
  echo "WATCHDOG_PID=$!" >>"$STATE_FILE"
}

cmd_stop() {
  if ! read_state; then
    log "no broker recorded for web port $WEB_PORT (nothing to stop)"
    return 0
  fi
  if is_our_broker "$STATE_PID"; then
    log "stopping broker pid $STATE_PID ..."
    kill_broker "$STATE_PID"
  else
    log "recorded broker pid $STATE_PID is not running"
  fi
  if [[ -n "$STATE_WATCHDOG_PID" ]] && kill -0 "$STATE_WATCHDOG_PID" 2>/dev/null; then
    kill -TERM "$STATE_WATCHDOG_PID" 2>/dev/null || true
  fi
  remove_run_dir "$STATE_RUN_DIR"
  rm -f "$STATE_FILE"
  log "stopped"
}

cmd_topology() {
  check_port_number PULSAR_WEB_PORT "$WEB_PORT"
  read_state || true # a token broker started here: its token
  create_tg_topology
  log "tenant tg and namespaces tg/flow, tg/request, tg/response, tg/notify exist on $WEB_URL"
}

cmd_status() {
  if ! read_state; then
    echo "not running (no broker recorded for web port $WEB_PORT)"
    return 3
  fi
  if ! is_our_broker "$STATE_PID"; then
    echo "not running (recorded pid $STATE_PID is gone; 'pulsar.sh stop' cleans up)"
    return 3
  fi
  local status
  status="$(http_status "$WEB_URL/admin/v2/namespaces/public/default")"
  if [[ "$status" == 200 ]]; then
    echo "running: pid $STATE_PID, pulsar://$HOST:$STATE_BROKER_PORT, $WEB_URL, $WS_URL, data $STATE_RUN_DIR"
    return 0
  fi
  echo "starting or unhealthy: pid $STATE_PID, admin API answered HTTP $status, data $STATE_RUN_DIR"
  return 1
}

cmd_run() {
  cmd_start
  read_state || die "state file vanished"
  local pid="$STATE_PID"
  trap 'echo; cmd_stop; exit 0' INT TERM HUP
  log "broker running; press Ctrl-C to stop (log: $STATE_RUN_DIR/pulsar.log)"
  while kill -0 "$pid" 2>/dev/null; do sleep 1; done
  trap - INT TERM HUP
  print_log_tail "$STATE_RUN_DIR/pulsar.log"
  cmd_stop
  die "the broker exited unexpectedly"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  run) cmd_run ;;
  status) cmd_status ;;
  topology) cmd_topology ;;
  classpath) resolve_classpath && echo "$CLASSPATH_FILE" ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
