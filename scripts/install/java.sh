#!/usr/bin/env bash
# Java builds: OpenJDK 17 (javac, jar) and Maven from Debian. Idempotent: installs only what is missing.
set -euo pipefail

need=()
[[ -x /usr/bin/javac && -x /usr/bin/jar ]] && /usr/bin/javac -version 2>&1 | grep -q ' 17\.' || need+=(openjdk-17-jdk-headless)
[[ -x /usr/bin/mvn ]] || need+=(maven)
((${#need[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "missing Debian packages for Java builds: ${need[*]} (run as root or install them)" >&2
  exit 1
fi
echo "installing Debian packages for Java builds: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
