#!/usr/bin/env bash
# A single Apache Kafka broker in KRaft mode on loopback, for development and tests.
# The broker's jars come from Maven Central through Maven and are cached, so only the first run
# downloads. Usage: scripts/kafka.sh start|stop|status
set -euo pipefail

KAFKA_VERSION="${SVC_KAFKA_VERSION:-4.1.2}"
LOG4J_VERSION=2.24.3
PORT="${SVC_KAFKA_PORT:-19092}"
CONTROLLER_PORT=$((PORT + 1))
CACHE="${SVC_CACHE_DIR:-$HOME/.cache/svc}/kafka-$KAFKA_VERSION"
DIR="${SVC_KAFKA_DIR:-/tmp/svc-kafka-$PORT}"
PID_FILE="$DIR/kafka.pid"
SERVER_LOG="$DIR/logs/server.log"
START_TIMEOUT_S="${SVC_KAFKA_START_TIMEOUT:-120}"

log() { echo "kafka.sh: $*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

running_pid() {
  local pid
  [[ -f "$PID_FILE" ]] || return 1
  pid="$(cat "$PID_FILE")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

resolve_libs() {
  [[ -f "$CACHE/libs/.complete" ]] && return 0
  command -v mvn >/dev/null || { log "Maven (mvn) is needed to fetch Kafka $KAFKA_VERSION"; exit 1; }
  command -v java >/dev/null || { log "Java 17+ is needed to run Kafka"; exit 1; }
  log "resolving org.apache.kafka:kafka_2.13:$KAFKA_VERSION into $CACHE/libs"
  mkdir -p "$CACHE"
  # Kafka logs through slf4j 1.7; log4j2 behind it writes to a file, as the Kafka 4 distribution does.
  cat >"$CACHE/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>svc.local</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>$KAFKA_VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
  rm -rf "$CACHE/libs"
  mvn -q -B -f "$CACHE/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$CACHE/libs" >"$CACHE/mvn.log" 2>&1 \
    || { log "Maven failed:"; cat "$CACHE/mvn.log" >&2; exit 1; }
  touch "$CACHE/libs/.complete"
}

write_config() {
  mkdir -p "$DIR/data" "$DIR/logs"
  cat >"$DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$DIR/data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
min.insync.replicas=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
auto.create.topics.enable=false
delete.topic.enable=true
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
PROPS
  cat >"$DIR/log4j2.properties" <<PROPS
appender.file.type=File
appender.file.name=file
appender.file.fileName=$SERVER_LOG
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
logger.kafka.name=kafka
logger.kafka.level=INFO
logger.apache.name=org.apache.kafka
logger.apache.level=INFO
PROPS
}

format_storage() {
  [[ -f "$DIR/data/meta.properties" ]] && return 0
  # Base64url of 16 random bytes is a valid Kafka cluster id; '=' form keeps a leading '-' an argument.
  local cluster_id
  cluster_id="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
  java -Dlog4j2.configurationFile="$DIR/log4j2.properties" -cp "$CACHE/libs/*" kafka.tools.StorageTool \
    format --config "$DIR/server.properties" --cluster-id="$cluster_id" --ignore-formatted >"$DIR/logs/format.log" 2>&1 \
    || { log "formatting storage failed:"; cat "$DIR/logs/format.log" >&2; exit 1; }
}

wait_ready() {
  local pid="$1" deadline=$((SECONDS + START_TIMEOUT_S))
  # The port is bound before the broker serves requests; the log line marks it ready.
  until port_open && grep -q "Kafka Server started" "$SERVER_LOG" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "broker exited during start-up; last lines of $DIR/logs:"
      tail -n 30 "$DIR/logs/stdout.log" "$SERVER_LOG" >&2 2>/dev/null || true
      exit 1
    fi
    if ((SECONDS >= deadline)); then
      log "broker not ready after ${START_TIMEOUT_S}s; see $SERVER_LOG"
      exit 1
    fi
    sleep 0.2
  done
}

start() {
  mkdir -p "$DIR"
  # Concurrent starts (several test runs) must not launch two brokers on one data folder.
  exec 9>"$DIR/start.lock"
  flock 9
  local pid
  if pid="$(running_pid)"; then
    wait_ready "$pid"
  elif port_open; then
    log "something already listens on 127.0.0.1:$PORT; using it"
  else
    resolve_libs
    write_config
    format_storage
    : >"$SERVER_LOG"
    # 9>&-: the broker must not inherit the lock, or it would hold it for its whole life; setsid:
    # a session of its own, so that whatever started it (a test run, a shell whose job is killed
    # with its process group) can end without taking the broker along
    setsid nohup java -Xms256m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$DIR/log4j2.properties" \
      -cp "$CACHE/libs/*" kafka.Kafka "$DIR/server.properties" \
      >"$DIR/logs/stdout.log" 2>&1 </dev/null 9>&- &
    pid=$!
    echo "$pid" >"$PID_FILE"
    wait_ready "$pid"
    log "Kafka $KAFKA_VERSION started (pid $pid, data in $DIR)"
  fi
  echo "KAFKA_BROKERS=127.0.0.1:$PORT"
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    log "not running"
    return 0
  fi
  kill "$pid"
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; log "stopped"; return 0; }
    sleep 0.2
  done
  log "broker did not stop in 30s; killing it"
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$PID_FILE"
}

status() {
  local pid
  if pid="$(running_pid)"; then
    echo "running (pid $pid) KAFKA_BROKERS=127.0.0.1:$PORT"
  elif port_open; then
    echo "not started by this script, but 127.0.0.1:$PORT is open"
  else
    echo "stopped"
    return 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
