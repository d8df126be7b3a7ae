# shellcheck shell=bash
# Sourced by scripts/with-services.sh: start_gitea WORKDIR starts one throwaway Gitea (SQLite, on
# loopback, OAuth2 on, webhooks to loopback allowed) for the external-SCM tests, with an admin
# user and a token, and exports where the tests find it:
#   ALGOHOST_TEST_GITEA_URL, ALGOHOST_TEST_GITEA_ADMIN_USER, ALGOHOST_TEST_GITEA_ADMIN_PASSWORD,
#   ALGOHOST_TEST_GITEA_ADMIN_TOKEN
# and GITEA_PID for stopping it. The binary comes from scripts/lib/build-gitea.sh.

start_gitea() {
  local work=$1 bin static port conf i
  local cache=${ALGOHOST_TEST_CACHE:-/var/cache/algohost-test}/gitea/1.26.0
  bin=$cache/gitea
  if [[ ! -x $bin ]]; then
    echo "Gitea is not built: the external-SCM tests against it are skipped (scripts/install-test-deps.sh builds it)" >&2
    return 0
  fi
  static=$(cat "$cache/static-root")
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$work/gitea/conf"
  conf=$work/gitea/conf/app.ini
  local run_user=${USER:-$(id -un)} unsafe=false
  if [[ $(id -u) -eq 0 ]]; then
    run_user=root
    unsafe=true
  fi
  # Written before the secrets: `gitea generate` refuses to run as root without a config saying so.
  cat >"$conf" <<INI
APP_NAME = algohost tests
RUN_USER = $run_user
RUN_MODE = prod
WORK_PATH = $work/gitea
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = $unsafe

[database]
DB_TYPE = sqlite3
PATH = $work/gitea/gitea.db

[repository]
ROOT = $work/gitea/repositories
DEFAULT_BRANCH = main

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = $port
ROOT_URL = http://127.0.0.1:$port/
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = $static
APP_DATA_PATH = $work/gitea/data

[security]
INSTALL_LOCK = true

[oauth2]
ENABLED = true

[webhook]
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 30

[service]
DISABLE_REGISTRATION = true

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[mailer]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[log]
MODE = file
LEVEL = Warn
ROOT_PATH = $work/gitea/log
INI
  local secret_key internal_token jwt_secret
  secret_key=$("$bin" --config "$conf" generate secret SECRET_KEY)
  internal_token=$("$bin" --config "$conf" generate secret INTERNAL_TOKEN)
  jwt_secret=$("$bin" --config "$conf" generate secret JWT_SECRET)
  printf '\n[security]\nSECRET_KEY = %s\nINTERNAL_TOKEN = %s\n[oauth2]\nJWT_SECRET = %s\n' \
    "$secret_key" "$internal_token" "$jwt_secret" >>"$conf"
  "$bin" --config "$conf" migrate >"$work/gitea/migrate.log" 2>&1
  local password
  password=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
  "$bin" --config "$conf" admin user create --admin --username gitea_admin --password "$password" \
    --email gitea_admin@example.test --must-change-password=false >/dev/null
  (cd "$work/gitea" && exec "$bin" --config "$conf" web >"$work/gitea/web.log" 2>&1) &
  GITEA_PID=$!
  for ((i = 0; i < 300; i++)); do
    curl -fsS "http://127.0.0.1:$port/api/healthz" >/dev/null 2>&1 && break
    kill -0 "$GITEA_PID" 2>/dev/null || { echo "Gitea did not start:" >&2; tail -n 20 "$work/gitea/web.log" >&2; return 1; }
    sleep 0.1
  done
  # As root, Gitea's warning about it comes first on stdout; the token is the last line.
  ALGOHOST_TEST_GITEA_ADMIN_TOKEN=$("$bin" --config "$conf" admin user generate-access-token --username gitea_admin \
    --token-name tests --scopes all --raw | tail -n 1)
  export ALGOHOST_TEST_GITEA_URL="http://127.0.0.1:$port"
  export ALGOHOST_TEST_GITEA_ADMIN_USER=gitea_admin
  export ALGOHOST_TEST_GITEA_ADMIN_PASSWORD=$password
  export ALGOHOST_TEST_GITEA_ADMIN_TOKEN
}
