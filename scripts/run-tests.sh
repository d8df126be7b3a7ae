#!/usr/bin/env bash
# Runs test files with Node's test runner and ends with the line "N passed, N failed, N skipped".
# Usage: scripts/run-tests.sh [test files…]   (default: every packages/*/test/**/*.test.ts)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if (($#)); then files=("$@"); else mapfile -t files < <(find packages -path '*/node_modules' -prune -o -path '*/test/*' -name '*.test.ts' -print | sort); fi

# Each file's time in the runs before, kept outside the checkout: the slowest files start first,
# so that two at a time the run does not end with one long file running alone. A file not timed
# yet counts as a minute; without a record, files start in name order.
times="${ALGOHOST_TEST_CACHE:-/var/cache/algohost-test}/test-file-times.tsv"
if mkdir -p "$(dirname "$times")" 2>/dev/null && [[ -w $(dirname "$times") ]]; then
  export ALGOHOST_TEST_TIMES=$times
  if [[ -f $times ]]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" |
      awk -F'\t' 'NR == FNR { ms[$2] = $1; next } { print (($0 in ms) ? ms[$0] : 60000) "\t" $0 }' "$times" - |
      sort -s -t$'\t' -k1,1nr | cut -f2)
  fi
fi
tap=$(mktemp /tmp/algohost-tap.XXXXXX)
timings=$(mktemp /tmp/algohost-timings.XXXXXX)
trap 'rm -f "$tap" "$timings"' EXIT

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
