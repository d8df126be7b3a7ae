#!/usr/bin/env bash
# Runs test files with Node's test runner and ends with the line "N passed, N failed, N skipped".
# Usage: scripts/run-tests.sh [test files…]   (default: every packages/*/test/**/*.test.ts)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# The Node that node_modules was built for (scripts/lib/node.sh).
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
use_node || exit 1

if (($#)); then files=("$@"); else mapfile -t files < <(find packages -path '*/node_modules' -prune -o -path '*/test/*' -name '*.test.ts' -print | sort); fi
# The times of the last run order the files, longest first (scripts/test-lanes.mjs). They are
# kept beside the npm package cache, outside the checkout, so a fresh clone on the same machine
# (CI) starts in a good order; they only order the files, so nothing else reads them.
if [[ -z ${ALGOHOST_TEST_TIMINGS_FILE:-} ]]; then
  ALGOHOST_TEST_TIMINGS_FILE=node_modules/.cache/algohost/test-timings.json
  mkdir -p /var/cache/algohost 2>/dev/null && [[ -w /var/cache/algohost ]] && ALGOHOST_TEST_TIMINGS_FILE=/var/cache/algohost/test-timings.json
fi
export ALGOHOST_TEST_TIMINGS_FILE
# The run's shared builds (packages/server/test/support/shared-builds.ts): a fixture tree built
# once is reused by the run's tests that only call it. Per run, so code changed between runs
# always builds anew.
ALGOHOST_TEST_SHARED_BUILDS=$(mktemp -d /tmp/algohost-shared-builds.XXXXXX)
export ALGOHOST_TEST_SHARED_BUILDS
trap 'rm -rf "$ALGOHOST_TEST_SHARED_BUILDS"' EXIT

# Kept beside the test times, on the machine: TypeScript as transformed for the tests
# (scripts/test-loader.mjs, by content) and V8's compiled code of every module (Node's compile
# cache, by content too). Both only spare work; neither can serve a stale file.
cache_root=$(dirname "$ALGOHOST_TEST_TIMINGS_FILE")
export ALGOHOST_TEST_LOADER_CACHE=$cache_root/test-loader NODE_COMPILE_CACHE=$cache_root/node-compile-cache

# Tests that start the server as a process of its own run it compiled, as `npm start` does
# (packages/server/test/support/server-entry.ts): it starts on about half the CPU of tsx.
node --import tsx scripts/build-server.ts || exit 1
export ALGOHOST_TEST_SERVER_DIST=$PWD/packages/server/dist/main/start.js

# Three lanes (ALGOHOST_TEST_CONCURRENCY), each file in a process of its own with a time limit.
node scripts/test-lanes.mjs "${files[@]}"
