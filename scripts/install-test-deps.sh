#!/usr/bin/env bash
# What only the tests need beyond scripts/install-deps.sh: a real browser for the client's
# browser test (Chromium from Debian; playwright-core drives it and never downloads its own).
set -euo pipefail

if ! command -v chromium >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing Debian package: chromium (run as root or install it)" >&2
    exit 1
  fi
  echo "installing Debian packages: chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
