#!/usr/bin/env bash
# Ruby builds: Ruby 3.1 and Bundler from Debian 12 (ruby, ruby-bundler), plus ruby-dev for gems
# with native extensions (the compilers come with install-deps.sh's g++ and make).
# Idempotent: installs only what is missing.
set -euo pipefail
# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/../lib/apt.sh"

need=()
for pkg in ruby ruby-bundler ruby-dev; do
  installed "$pkg" || need+=("$pkg")
done

apt_install "Ruby builds" "${need[@]}"
