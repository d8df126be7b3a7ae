#!/usr/bin/env bash
# What only the tests need beyond scripts/install-deps.sh: a real browser for the browser tests
# of the typed client and the web UI (Chromium from Debian; playwright-core drives it and never
# downloads its own) and shellcheck for the repository's shell scripts.
set -euo pipefail

# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/lib/apt.sh"

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v shellcheck >/dev/null || need+=(shellcheck)
apt_install "the browser tests and shellcheck" "${need[@]}"
