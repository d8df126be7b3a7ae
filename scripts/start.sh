#!/usr/bin/env bash
# `npm start` and `npm run algohost -- ARGS…`: compiles the server (scripts/build-server.ts), then
# runs packages/server/dist/main/start.js with ARGS on Node 24, whichever Node's npm started this:
# the PATH's node when it is 24 or newer, else the one `npm run setup` installed
# (scripts/lib/node.sh), the Node node_modules was built for.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
use_node
node --import tsx scripts/build-server.ts
exec node --enable-source-maps packages/server/dist/main/start.js "$@"
