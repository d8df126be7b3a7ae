#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what is missing (and builds the web UI),
# checks types, lint, the dependency rules, unused code (knip), shell scripts (shellcheck),
# format, OpenAPI drift, the production dependencies' advisories (npm audit), the web UI's
# JavaScript budget, the docs' links and citations (scripts/check-docs.ts) and the size of
# classes and functions (scripts/check-unit-sizes.ts), then runs every test with PostgreSQL
# started alongside.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# From here on, Node 24: `npm test` may have been started by an older system Node's npm, and
# install-deps.sh installed Node 24 and built node_modules for it (scripts/lib/node.sh).
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
use_node
bash scripts/install-test-deps.sh
echo "== typecheck"; npm run --silent typecheck
echo "== lint"; npm run --silent lint
echo "== dependency rules"; npm run --silent depcheck
echo "== unused files, exports and dependencies"; npm run --silent knip
echo "== shell scripts"; git ls-files -z --cached --others --exclude-standard '*.sh' .ci/run | xargs -0 shellcheck
echo "== format"; npm run --silent format:check
echo "== openapi drift"; npm run --silent openapi:check
echo "== production dependencies (npm audit --omit=dev)"; node --import tsx scripts/audit-dependencies.ts
echo "== web UI JavaScript budget"; node --import tsx scripts/check-web-bundle.ts
echo "== docs: links, lengths, rule citations"; node --import tsx scripts/check-docs.ts
echo "== unit sizes: classes <= 300 lines, functions <= 100"; node --import tsx scripts/check-unit-sizes.ts
echo "== tests"
exec bash scripts/with-services.sh bash scripts/run-tests.sh "$@"
