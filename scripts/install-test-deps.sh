#!/usr/bin/env bash
# What only the tests need beyond scripts/install-deps.sh: a real browser for the client's
# browser test (Chromium from Debian; playwright-core drives it and never downloads its own).
set -euo pipefail

source "$(dirname "$0")/lib/apt.sh"

need=()
command -v chromium >/dev/null || need+=(chromium)
apt_install "the browser tests" "${need[@]}"
