#!/usr/bin/env bash
# Runs a command with the services the tests need started on loopback and stopped afterwards:
# a throwaway PostgreSQL (ALGOHOST_TEST_POSTGRES_URL), and for the Event Flows tests two Kafka
# clusters (ALGOHOST_TEST_KAFKA_BROKERS, ALGOHOST_TEST_KAFKA2_BROKERS: the second for the test
# with two clusters connected at once) and ElasticMQ, an SQS server (ALGOHOST_TEST_SQS_ENDPOINT),
# for the external-SCM tests one Gitea (ALGOHOST_TEST_GITEA_*, scripts/lib/start-gitea.sh), and
# for the cluster-mode tests one nats-server with JetStream (ALGOHOST_TEST_NATS_URL; its payload
# limit raised to carry 10 MiB inputs and 15 MB outputs whole; users and permissions per role,
# ALGOHOST_TEST_NATS_USERS) and one S3-compatible server (ALGOHOST_TEST_S3_ENDPOINT, moto's
# server mode, with random credentials ALGOHOST_TEST_S3_ACCESS_KEY_ID/_SECRET_ACCESS_KEY).
# Usage: scripts/with-services.sh CMD…
# ALGOHOST_TEST_SERVICES (default "postgres,kafka,sqs,gitea,nats,s3") picks fewer: the brokers' JVMs
# take 3-6 s and a few hundred MB each. Their jars, the Gitea binary and moto come from
# scripts/install-test-deps.sh; without them those services are not started and the tests that
# need them say so and skip.
set -euo pipefail
# shellcheck source=scripts/lib/brokers.sh
source "$(dirname "$0")/lib/brokers.sh"
# shellcheck source=scripts/lib/start-gitea.sh
source "$(dirname "$0")/lib/start-gitea.sh"

services=",${ALGOHOST_TEST_SERVICES:-postgres,kafka,sqs,gitea,nats,s3},"
wants() { [[ $services == *",$1,"* ]]; }

pgbin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
if wants postgres; then
  [[ -d $pgbin ]] || { echo "PostgreSQL is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
fi
moto_bin="${ALGOHOST_TEST_CACHE:-/var/cache/algohost-test}/moto/bin/moto_server"
if wants nats && ! command -v nats-server >/dev/null; then
  echo "nats-server is not installed (scripts/install-test-deps.sh installs it): not started" >&2
  services=${services//,nats,/,}
fi
if wants s3 && [[ ! -x $moto_bin ]]; then
  echo "moto's S3 server is not in $moto_bin (scripts/install-test-deps.sh installs it): not started" >&2
  services=${services//,s3,/,}
fi
if (wants kafka || wants sqs) && ! brokers_fetched; then
  echo "the Kafka and ElasticMQ jars are not in $BROKERS_CACHE (scripts/install-test-deps.sh fetches them): brokers not started" >&2
  services=${services//,kafka,/,}
  services=${services//,sqs,/,}
fi

# The nats-server's users, as docs/cluster.md §3 gives them but for any ALGOHOST_NATS_PREFIX
# (each test file runs its cluster under a prefix of its own, hence `*` for the prefix's token,
# and for the stream and bucket names made from it): `api` for API nodes, `worker-1`…`worker-4`
# (a worker's run subject, presence key and inbox carry its user) and `test`, with every
# permission, for the tests' own look at the stream and the bucket. Passwords are new each run;
# ALGOHOST_TEST_NATS_USERS gives them to the tests (user:password,…) and auth.conf, beside the
# server's configuration, is what a test's own nats-server includes to require the same.
write_nats_auth() {
  local dir=$1 user password users=() entries=()
  password=$(openssl rand -hex 24)
  users+=("api:$password")
  entries+=("{ user: api, password: \"$password\", permissions: {
      publish: { allow: [\"*.work.>\", \"*.run.node.>\", \"\$JS.API.>\", \"\$JS.FC.>\"] }
      subscribe: { allow: [\"_INBOX.*.api.>\", \"*.reply.api.>\", \"*.build.*\"] } } }")
  for user in worker-1 worker-2 worker-3 worker-4; do
    password=$(openssl rand -hex 24)
    users+=("$user:$password")
    entries+=("{ user: $user, password: \"$password\", permissions: {
      publish: { allow: [\"\$KV.*.$user.*\", \"*.reply.>\", \"*.build.*\", \"\$JS.ACK.*.>\", \"\$JS.API.INFO\", \"\$JS.API.STREAM.INFO.*\",
        \"\$JS.API.CONSUMER.INFO.*.*\", \"\$JS.API.CONSUMER.MSG.NEXT.*.*\", \"\$JS.API.CONSUMER.CREATE.*.>\",
        \"\$JS.API.CONSUMER.DELETE.*.*\", \"\$JS.API.DIRECT.GET.*.>\", \"\$JS.API.STREAM.MSG.GET.*\", \"\$JS.FC.*.>\"] }
      subscribe: { allow: [\"*.run.node.$user.*\", \"_INBOX.*.$user.>\"] } } }")
  done
  password=$(openssl rand -hex 24)
  users+=("test:$password")
  entries+=("{ user: test, password: \"$password\" }")
  # timeout: a test process starts several nodes at once on a loaded machine, and one whose event
  # loop is busy for more than nats-server's default 2 s before it logs in was refused as if its
  # password were wrong.
  { echo 'authorization { timeout: 10, users: ['; printf '  %s\n' "${entries[@]}"; echo '] }'; } >"$dir/auth.conf"
  chmod 0600 "$dir/auth.conf"
  ALGOHOST_TEST_NATS_USERS=$(IFS=,; echo "${users[*]}")
  export ALGOHOST_TEST_NATS_USERS ALGOHOST_TEST_NATS_AUTH="$dir/auth.conf"
}

work=$(mktemp -d /tmp/algohost-services.XXXXXX)
chmod 0755 "$work"
as_pg=()
if [[ $(id -u) -eq 0 ]]; then as_pg=(runuser -u postgres --); fi
pids=()

stop() {
  if [[ -d $work/pg/data ]]; then "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg/data" -m immediate stop >/dev/null 2>&1 || true; fi
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in {1..50}; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap stop EXIT

# The JVMs start first (the slowest; each start_* formats or writes its config, then forks the
# server and says where it is), PostgreSQL while they start, then each is waited for.
if wants kafka; then
  start_kafka "$work/kafka1" >"$work/kafka1.at" &
  start_kafka "$work/kafka2" >"$work/kafka2.at" &
fi
if wants sqs; then start_elasticmq "$work/elasticmq" >"$work/elasticmq.at" & fi
wait
if wants kafka; then
  read -r kafka1_pid kafka1 <"$work/kafka1.at"
  read -r kafka2_pid kafka2 <"$work/kafka2.at"
  pids+=("$kafka1_pid" "$kafka2_pid")
fi
if wants sqs; then
  read -r sqs_pid sqs <"$work/elasticmq.at"
  pids+=("$sqs_pid")
fi

if wants nats; then
  mkdir "$work/nats"
  nats_port=$(free_port)
  nats_mon=$(free_port)
  write_nats_auth "$work/nats"
  # max_payload: a call's 10 MiB input or 15 MB output travels as one message (plus headers).
  printf '%s\n' "listen: 127.0.0.1:$nats_port" "http: 127.0.0.1:$nats_mon" 'max_payload: 32MB' \
    "jetstream { store_dir: \"$work/nats/js\" }" "include \"auth.conf\"" >"$work/nats/nats.conf"
  nats-server -c "$work/nats/nats.conf" >"$work/nats/nats.log" 2>&1 &
  pids+=($!)
fi
if wants s3; then
  s3_port=$(free_port)
  # moto accepts any credentials (it checks none): these are random only so that nothing in the
  # tests or docs learns a guessable pair; the S3 refusals are the real store's to enforce.
  ALGOHOST_TEST_S3_ACCESS_KEY_ID="AK$(openssl rand -hex 9 | tr a-f A-F)"
  ALGOHOST_TEST_S3_SECRET_ACCESS_KEY=$(openssl rand -base64 30)
  export ALGOHOST_TEST_S3_ACCESS_KEY_ID ALGOHOST_TEST_S3_SECRET_ACCESS_KEY
  "$moto_bin" -H 127.0.0.1 -p "$s3_port" >"$work/s3.log" 2>&1 &
  s3_pid=$!
  pids+=("$s3_pid")
fi

if wants postgres; then
  mkdir "$work/pg"
  [[ ${#as_pg[@]} -eq 0 ]] || chown postgres "$work/pg"
  port=$(free_port)
  "${as_pg[@]}" "$pgbin/initdb" -D "$work/pg/data" -A trust -U postgres --no-sync >/dev/null
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg/data" -l "$work/pg/postgres.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $work/pg -c fsync=off -c max_connections=200" start >/dev/null
  export ALGOHOST_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
fi

if wants gitea; then
  GITEA_PID=
  start_gitea "$work"
  [[ -z $GITEA_PID ]] || pids+=("$GITEA_PID")
fi

if wants kafka; then
  wait_for_line "$work/kafka1/kafka.log" 'Kafka Server started' "$kafka1_pid" Kafka
  wait_for_line "$work/kafka2/kafka.log" 'Kafka Server started' "$kafka2_pid" 'the second Kafka'
  export ALGOHOST_TEST_KAFKA_BROKERS=$kafka1 ALGOHOST_TEST_KAFKA2_BROKERS=$kafka2
fi
if wants sqs; then
  wait_for_line "$work/elasticmq/elasticmq.log" 'Started SQS rest server' "$sqs_pid" ElasticMQ
  export ALGOHOST_TEST_SQS_ENDPOINT=$sqs
fi

if wants nats; then
  for _ in {1..100}; do curl -sf "http://127.0.0.1:$nats_mon/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$nats_mon/healthz" >/dev/null || { echo "nats-server did not start:" >&2; tail -n 20 "$work/nats/nats.log" >&2; exit 1; }
  export ALGOHOST_TEST_NATS_URL="nats://127.0.0.1:$nats_port"
fi
if wants s3; then
  for _ in {1..300}; do curl -s -o /dev/null "http://127.0.0.1:$s3_port/" && break; kill -0 "$s3_pid" 2>/dev/null || break; sleep 0.1; done
  curl -s -o /dev/null "http://127.0.0.1:$s3_port/" || { echo "the S3 server did not start:" >&2; tail -n 20 "$work/s3.log" >&2; exit 1; }
  export ALGOHOST_TEST_S3_ENDPOINT="http://127.0.0.1:$s3_port"
fi

"$@"
