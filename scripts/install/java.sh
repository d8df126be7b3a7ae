#!/usr/bin/env bash
# Java builds: OpenJDK 17 (javac, jar) and Maven from Debian. Idempotent: installs only what is missing.
set -euo pipefail
# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/../lib/apt.sh"

need=()
[[ -x /usr/bin/javac && -x /usr/bin/jar ]] && /usr/bin/javac -version 2>&1 | grep -q ' 17\.' || need+=(openjdk-17-jdk-headless)
[[ -x /usr/bin/mvn ]] || need+=(maven)

apt_install "Java builds" "${need[@]}"
