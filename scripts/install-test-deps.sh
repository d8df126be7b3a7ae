#!/usr/bin/env bash
# What only the tests need beyond scripts/install-deps.sh: a real browser for the browser tests
# of the typed client and the web UI (Chromium from Debian; playwright-core drives it and never
# downloads its own), shellcheck for the repository's shell scripts, the Kafka and ElasticMQ
# jars (Maven Central), schemathesis (from PyPI, pinned, in its own virtual environment) for the
# schema fuzzing of packages/server/test/api/schema-fuzz.test.ts, and Gitea for the external-SCM tests
# (built from the Go module proxy by scripts/lib/build-gitea.sh: about 7 minutes on 2 cores the
# first time). Downloads and builds are cached in $ALGOHOST_TEST_CACHE (default
# /var/cache/algohost-test), outside the checkout, so a fresh clone reuses them.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lib/apt.sh
source "$here/lib/apt.sh"
cd "$here/.."

SCHEMATHESIS_VERSION=4.32.5
MOTO_VERSION=5.2.5
PYTHON=/usr/bin/python3

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v shellcheck >/dev/null || need+=(shellcheck)
command -v nats-server >/dev/null || need+=(nats-server)
"$PYTHON" -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
apt_install "the browser tests, shellcheck, the schema fuzzing and the cluster tests" "${need[@]}"

# The Event Flows tests' brokers: Kafka and ElasticMQ jars from Maven Central into the test cache
# (once; scripts/with-services.sh starts them from there).
# shellcheck source=scripts/lib/brokers.sh
source "$here/lib/brokers.sh"
fetch_brokers

# A virtual environment is not relocatable, so it is made in place; the stamp, written last,
# says which version finished installing (a cut-off install or another version starts over).
venv="${ALGOHOST_TEST_CACHE:-/var/cache/algohost-test}/schemathesis"
if [[ "$(cat "$venv/installed" 2>/dev/null)" != "$SCHEMATHESIS_VERSION" ]]; then
  echo "installing schemathesis $SCHEMATHESIS_VERSION into $venv"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  echo "$SCHEMATHESIS_VERSION" >"$venv/installed"
fi

# The external-SCM tests' Gitea (once; scripts/with-services.sh starts it from there).
bash "$here/lib/build-gitea.sh" >/dev/null
# The cluster tests' S3-compatible server: moto in server mode (maintained, pure Python, starts
# in about two seconds; MinIO would need a long Go build on these 2-core machines).
moto="${ALGOHOST_TEST_CACHE:-/var/cache/algohost-test}/moto"
if [[ "$(cat "$moto/installed" 2>/dev/null)" != "$MOTO_VERSION" ]]; then
  echo "installing moto[server] $MOTO_VERSION into $moto"
  rm -rf "$moto"
  "$PYTHON" -m venv "$moto"
  "$moto/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
  echo "$MOTO_VERSION" >"$moto/installed"
fi
