#!/usr/bin/env bash
# Builds the web UI into packages/web/dist (what the server serves at /), each text file with its
# brotli and gzip copies beside it, when its sources, or those of the typed client it bundles, or
# the lock file changed since the last build. Used by
# scripts/install-deps.sh (npm run setup) and by the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# Test files run side by side and each may ask for a build: one builds, the others wait for it.
exec 9>packages/web/.build.lock
flock 9

# Kept beside dist/, not in it: everything in dist/ is served.
stamp=packages/web/.dist-source-hash
want=$(find packages/web/src packages/web/public packages/web/index.html packages/web/vite.config.ts packages/web/package.json \
  packages/client/src package-lock.json scripts/precompress-web.ts -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" && -f packages/web/dist/index.html ]]; then
  exit 0
fi
echo "building the web UI (packages/web/dist)"
npm run --silent build -w @algohost/web -- --logLevel warn
node --import tsx scripts/precompress-web.ts packages/web/dist
echo "$want" > "$stamp"
