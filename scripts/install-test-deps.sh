#!/usr/bin/env bash
# What only the tests need beyond scripts/install-deps.sh: a real browser for the client's
# browser test (Chromium from Debian; playwright-core drives it and never downloads its own),
# the shellcheck linter for the repository's shell scripts, and Gitea for the external-SCM tests (built
# once from the Go module proxy into .cache/gitea: ~7 min the first time on 2 cores).
set -euo pipefail

# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/lib/apt.sh"

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v shellcheck >/dev/null || need+=(shellcheck)
apt_install "the browser tests and shellcheck" "${need[@]}"
bash "$(dirname "$0")/lib/build-gitea.sh" >/dev/null
