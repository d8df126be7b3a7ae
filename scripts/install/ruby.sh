#!/usr/bin/env bash
# Ruby builds: Ruby 3.1 and Bundler from Debian 12 (ruby, ruby-bundler), plus ruby-dev for gems
# with native extensions (the compilers come with install-deps.sh's g++ and make).
# Idempotent: installs only what is missing.
set -euo pipefail

installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]; }

need=()
for pkg in ruby ruby-bundler ruby-dev; do
  installed "$pkg" || need+=("$pkg")
done
((${#need[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "missing Debian packages for Ruby builds: ${need[*]} (run as root or install them)" >&2
  exit 1
fi
echo "installing Debian packages for Ruby builds: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
