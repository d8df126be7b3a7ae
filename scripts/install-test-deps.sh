#!/usr/bin/env bash
# What only the tests need beyond scripts/install-deps.sh: a real browser for the browser tests
# of the typed client and the web UI (Chromium from Debian; playwright-core drives it and never
# downloads its own), shellcheck for the repository's shell scripts, and the Kafka and ElasticMQ
# jars (Maven Central).
set -euo pipefail

# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/lib/apt.sh"

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v shellcheck >/dev/null || need+=(shellcheck)
apt_install "the browser tests and shellcheck" "${need[@]}"

# The Event Flows tests' brokers: Kafka and ElasticMQ jars from Maven Central into .cache/brokers
# (once; scripts/with-services.sh starts them from there).
# shellcheck source=scripts/lib/brokers.sh
source "$(dirname "$0")/lib/brokers.sh"
fetch_brokers
