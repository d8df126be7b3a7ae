#!/usr/bin/env bash
# The inner loop's tests (npm run test:quick): the domain's stores and rules, the API on SQLite
# and the Python runtime, with no service started (no PostgreSQL, no brokers, no cluster) and
# no language build but Python's, for the loop between edits; `npm test` runs these and
# everything else.
# Usage: scripts/run-quick-tests.sh [more test files…]
set -euo pipefail
cd "$(dirname "$0")/.."

test=packages/server/test
# Whole folders, less the files that build other languages, fuzz the API with an external tool,
# exercise the build path itself, or spend a minute each on one concern that rarely moves with an
# edit (concurrency under quota, the whole permission matrix, attacks on Git and credentials,
# version switching during a slow call): those are for `npm test`.
folders=(lib storage accounts algorithms api calls data)
slow=(
  "$test/algorithms/templates-build.test.ts" # builds every language's template
  "$test/api/schema-fuzz.test.ts"            # Schemathesis, minutes
  "$test/calls/pipelines.test.ts"            # the in-sandbox client of every language
  "$test/data/data-quota-concurrency.test.ts"
  "$test/api/authorization-matrix.test.ts"
  "$test/algorithms/security-git.test.ts"
  "$test/algorithms/versions.test.ts"
  "$test/accounts/security-credentials.test.ts"
)
files=()
for folder in "${folders[@]}"; do
  for file in "$test/$folder"/*.test.ts; do
    [[ " ${slow[*]} " == *" $file "* ]] || files+=("$file")
  done
done
files+=("$test/runtime/runners-python.test.ts")

# SQLite only, Python only; the tests that need a broker or a cluster say so and skip.
unset ALGOHOST_TEST_POSTGRES_URL ALGOHOST_TEST_KAFKA_BROKERS ALGOHOST_TEST_SQS_ENDPOINT ALGOHOST_TEST_NATS_URL ALGOHOST_TEST_S3_ENDPOINT
export ALGOHOST_TEST_LANGUAGES=python ALGOHOST_TEST_QUIET=1
exec bash scripts/run-tests.sh "${files[@]}" "$@"
