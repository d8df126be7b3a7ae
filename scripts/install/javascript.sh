#!/usr/bin/env bash
# JavaScript builds: Node.js 20 (or newer) with npm at /usr/bin/node and /usr/bin/npm, the ones the
# build sandbox runs (only /usr is visible in it): the language is `nodejs20`, so algorithms keep
# the system's Node.js while the server runs on the Node.js 24 of scripts/lib/node.sh (outside
# /usr, never seen by a sandbox). npm needs a Node.js, so it is normally there already; Debian
# 12's own nodejs is 18, too old, so a missing or older Node.js is reported rather than installed. find/xargs (findutils) and cp/ln (coreutils) come with
# every Debian system. Idempotent: checks only.
set -euo pipefail

problems=()
if [[ ! -x /usr/bin/node ]]; then
  problems+=("/usr/bin/node is missing")
elif ! /usr/bin/node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  problems+=("/usr/bin/node is $(/usr/bin/node --version), builds need Node.js 20 or newer")
fi
[[ -x /usr/bin/npm ]] || problems+=("/usr/bin/npm is missing")
((${#problems[@]})) || exit 0

printf 'JavaScript builds: %s\n' "${problems[@]}" >&2
echo "Install Node.js 20 with npm into /usr (e.g. the nodejs package of NodeSource's node_20.x repository)." >&2
exit 1
