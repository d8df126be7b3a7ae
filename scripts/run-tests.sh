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
# The files run two at a time, each lane taking the next file when its own ends: longest first
# (by the last run's times, scripts/test-timings.mjs; a file not timed yet counts as long) so
# that no long file starts last and leaves one lane idle while it runs. The times are kept beside
# the npm package cache, outside the checkout, so a fresh clone on the same machine (CI) starts
# in a good order; they only order the files, so nothing else reads them.
if [[ -z ${ALGOHOST_TEST_TIMINGS_FILE:-} ]]; then
  ALGOHOST_TEST_TIMINGS_FILE=node_modules/.cache/algohost/test-timings.json
  mkdir -p /var/cache/algohost 2>/dev/null && [[ -w /var/cache/algohost ]] && ALGOHOST_TEST_TIMINGS_FILE=/var/cache/algohost/test-timings.json
fi
export ALGOHOST_TEST_TIMINGS_FILE
mapfile -t files < <(node -e '
  const fs = require("node:fs");
  let ms = {};
  try { ms = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch {}
  const time = (f) => ms[f.replace(/^\.\//, "")] ?? Infinity;
  const files = process.argv.slice(2);
  for (const f of files.map((f, i) => [f, i]).sort((a, b) => time(b[0]) - time(a[0]) || a[1] - b[1])) console.log(f[0]);
' "$ALGOHOST_TEST_TIMINGS_FILE" "${files[@]}")
tap=$(mktemp /tmp/algohost-tap.XXXXXX)
timings=$(mktemp /tmp/algohost-timings.XXXXXX)
# The run's shared builds (packages/server/test/support/shared-builds.ts): a fixture tree built
# once is reused by the run's tests that only call it. Per run, so code changed between runs
# always builds anew.
ALGOHOST_TEST_SHARED_BUILDS=$(mktemp -d /tmp/algohost-shared-builds.XXXXXX)
export ALGOHOST_TEST_SHARED_BUILDS
trap 'rm -rf "$tap" "$timings" "$ALGOHOST_TEST_SHARED_BUILDS"' EXIT

# Three reporters put one more 'end' listener on the runner's stream than Node's default of ten
# allows, and Node warns of a leak that is none.
node --import tsx --disable-warning=MaxListenersExceededWarning --test --test-concurrency=2 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" \
  --test-reporter=./scripts/test-timings.mjs --test-reporter-destination="$timings" \
  "${files[@]}"
status=$?
cat "$timings"

count() { grep -E "^# $1 [0-9]+" "$tap" | tail -n 1 | awk '{print $3}'; }
passed=$(count pass); failed=$(count fail); skipped=$(count skipped); cancelled=$(count cancelled)
failed=$(( ${failed:-0} + ${cancelled:-0} ))
echo "${passed:-0} passed, ${failed} failed, ${skipped:-0} skipped"
exit $status
