# shellcheck shell=bash
# The message brokers of the Event Flows tests, run from jars fetched from Maven Central (no
# Docker here): Apache Kafka in KRaft mode and ElasticMQ (SQS API). Source it; the poms and
# configuration templates are in scripts/brokers/. Facts behind the settings: the Kafka and
# ElasticMQ notes of the machine (start-up 3-6 s each, heaps kept small: 2 cores, other tests
# beside them).

BROKERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../brokers" && pwd)
# Outside the checkout, so a fresh clone (CI) reuses what an earlier run fetched.
BROKERS_CACHE="${ALGOHOST_TEST_CACHE:-/var/cache/algohost-test}/brokers"
KAFKA_LIB=$BROKERS_CACHE/kafka-4.3.1/lib
ELASTICMQ_LIB=$BROKERS_CACHE/elasticmq-1.7.1/lib
# Small heaps and a quick-starting JIT: the tests move a few thousand records at most.
BROKER_JVM_OPTS=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Xss512k)

# True when both brokers' jars are in the cache.
brokers_fetched() { [[ -f $KAFKA_LIB/.complete && -f $ELASTICMQ_LIB/.complete ]]; }

# Copies each broker's runtime jars into the cache (mvn, Maven Central); a finished copy is
# marked .complete, so an interrupted one is redone and a finished one is never fetched again.
fetch_brokers() {
  local name lib
  for name in kafka elasticmq; do
    if [[ $name == kafka ]]; then lib=$KAFKA_LIB; else lib=$ELASTICMQ_LIB; fi
    [[ -f $lib/.complete ]] && continue
    echo "fetching the $name jars from Maven Central into $lib"
    rm -rf "$lib" && mkdir -p "$lib"
    MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.noreset=true" mvn -B -q -ntp -Dstyle.color=never -f "$BROKERS_DIR/$name-pom.xml" \
      dependency:copy-dependencies -DoutputDirectory="$lib" -DincludeScope=runtime
    touch "$lib/.complete"
  done
}

# A free TCP port on loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for_line LOG PATTERN PID WHAT: until LOG holds PATTERN (60 s at most), failing with the
# log's end when the process exits first.
wait_for_line() {
  local i
  for ((i = 0; i < 600; i++)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    if ! kill -0 "$3" 2>/dev/null; then
      echo "$4 exited while starting; its log ends:" >&2
      tail -n 20 "$1" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "$4 did not start within 60 s; its log ends:" >&2
  tail -n 20 "$1" >&2
  return 1
}

# start_kafka DIR: a single-node KRaft cluster (broker and controller) on loopback with its
# data in DIR; prints "PID HOST:PORT". Topics are not created automatically (as on most real
# clusters), so algohost must create what it needs.
start_kafka() {
  local dir=$1 port cport uuid
  port=$(free_port)
  cport=$(free_port)
  mkdir -p "$dir/logs"
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/logs
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.flush.interval.ms=1000
EOF
  local java_opts=("${BROKER_JVM_OPTS[@]}" "-Dlog4j2.configurationFile=$BROKERS_DIR/kafka-log4j2.properties" -cp "$KAFKA_LIB/*")
  uuid=$(java "${java_opts[@]}" kafka.tools.StorageTool random-uuid 2>/dev/null)
  # A static controller.quorum.voters list: format without --standalone.
  java "${java_opts[@]}" kafka.tools.StorageTool format --ignore-formatted -c "$dir/server.properties" -t "$uuid" >"$dir/format.log" 2>&1 ||
    { cat "$dir/format.log" >&2; return 1; }
  java -Xms96m -Xmx320m "${java_opts[@]}" kafka.Kafka "$dir/server.properties" >"$dir/kafka.log" 2>&1 &
  local pid=$!
  echo "$pid 127.0.0.1:$port"
}

# start_elasticmq DIR: an SQS-compatible server on loopback (account 000000000000, region
# us-east-1, messages in memory); prints "PID http://HOST:PORT".
start_elasticmq() {
  local dir=$1 port
  port=$(free_port)
  mkdir -p "$dir"
  # node-address: queue URLs name 127.0.0.1 (else localhost), region: ARNs name a real region.
  cat >"$dir/elasticmq.conf" <<EOF
include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = $port, context-path = "" }
rest-sqs { enabled = true, bind-port = $port, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
aws { region = "us-east-1", accountId = "000000000000" }
EOF
  java -Xms48m -Xmx192m "${BROKER_JVM_OPTS[@]}" "-Dconfig.file=$dir/elasticmq.conf" -cp "$ELASTICMQ_LIB/*" \
    org.elasticmq.server.Main >"$dir/elasticmq.log" 2>&1 &
  local pid=$!
  echo "$pid http://127.0.0.1:$port"
}
