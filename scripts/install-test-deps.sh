#!/usr/bin/env bash
# What only the tests need beyond scripts/install-deps.sh: a real browser for the client's
# browser test (Chromium from Debian; playwright-core drives it and never downloads its own),
# the linter of the repository's shell scripts, and schemathesis (from PyPI, pinned, in its
# own virtual environment under .cache/schemathesis) for the schema fuzzing of
# packages/server/test/schema-fuzz.test.ts and bench/fuzz-api.ts.
set -euo pipefail

# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/lib/apt.sh"
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
PYTHON=/usr/bin/python3

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v shellcheck >/dev/null || need+=(shellcheck)
"$PYTHON" -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
apt_install "the browser tests, shellcheck and the schema fuzzing" "${need[@]}"

# A virtual environment is not relocatable, so it is made in place; the stamp, written last,
# says which version finished installing (a cut-off install or another version starts over).
venv=.cache/schemathesis
if [[ "$(cat "$venv/installed" 2>/dev/null)" != "$SCHEMATHESIS_VERSION" ]]; then
  echo "installing schemathesis $SCHEMATHESIS_VERSION into $venv"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  echo "$SCHEMATHESIS_VERSION" >"$venv/installed"
fi
