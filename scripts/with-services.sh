#!/usr/bin/env bash
# Runs a command with the services the tests need started on loopback and stopped afterwards:
# a throwaway PostgreSQL (ALGOHOST_TEST_POSTGRES_URL) and one Gitea for the external-SCM tests
# (ALGOHOST_TEST_GITEA_*, see scripts/lib/start-gitea.sh). Usage: scripts/with-services.sh CMD…
set -euo pipefail

# shellcheck source=scripts/lib/start-gitea.sh
source "$(dirname "$0")/lib/start-gitea.sh"

pgbin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
[[ -d $pgbin ]] || { echo "PostgreSQL is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }

work=$(mktemp -d /tmp/algohost-services.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg=()
if [[ $(id -u) -eq 0 ]]; then
  chown postgres "$work"
  as_pg=(runuser -u postgres --)
fi

GITEA_PID=
stop() {
  [[ -n $GITEA_PID ]] && kill "$GITEA_PID" 2>/dev/null && wait "$GITEA_PID" 2>/dev/null
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop EXIT

"${as_pg[@]}" "$pgbin/initdb" -D "$work/data" -A trust -U postgres --no-sync >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/data" -l "$work/postgres.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $work -c fsync=off -c max_connections=200" start >/dev/null
export ALGOHOST_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
start_gitea "$work"

"$@"
