# shellcheck shell=bash
# install_node_modules: node_modules for this checkout's package-lock.json (source it from the
# repository's root). `npm ci` takes about two minutes on these machines, most of it compiling
# better-sqlite3 (no prebuilt binary is reachable), so a copy of the result is kept outside the
# checkout, one per lock file, Node ABI and platform, and a fresh clone of the same lock copies it
# in (seconds) instead. Only ever filled from a finished `npm ci`; never fails the install.

NODE_MODULES_CACHE=${ALGOHOST_NODE_MODULES_CACHE:-/var/cache/algohost/node_modules}
# Entries kept besides the one just made (older lock files), newest first.
NODE_MODULES_CACHE_KEEP=2

install_node_modules() {
  local stamp=node_modules/.algohost-lock-hash want entry
  # The lock, the Node ABI (native modules) and the platform decide what npm ci makes.
  want=$( (cat package-lock.json; node -p 'process.versions.modules + process.platform + process.arch') | sha256sum | cut -d' ' -f1)
  [[ -f $stamp && $(cat "$stamp") == "$want" ]] && return 0
  entry=$NODE_MODULES_CACHE/$want
  if [[ -f $entry/node_modules/.algohost-lock-hash ]] && [[ $(cat "$entry/node_modules/.algohost-lock-hash") == "$want" ]]; then
    echo "installing npm packages (copied from $entry, made by npm ci for this package-lock.json)"
    rm -rf node_modules
    if cp -a "$entry/node_modules" node_modules; then
      touch "$entry"
      return 0
    fi
    echo "warning: copying $entry failed; running npm ci instead" >&2
  fi
  echo "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
  save_node_modules "$entry"
}

# save_node_modules ENTRY: copies node_modules into the cache as ENTRY (whole or not at all),
# then drops the oldest entries. A cache that cannot be written only costs the next clone a npm ci.
save_node_modules() {
  local entry=$1 tmp old
  if ! install -d -m 0755 "$NODE_MODULES_CACHE" 2>/dev/null; then
    echo "note: $NODE_MODULES_CACHE cannot be written; the next fresh clone runs npm ci again" >&2
    return 0
  fi
  tmp=$(mktemp -d "$NODE_MODULES_CACHE/.new.XXXXXX") || return 0
  if cp -a node_modules "$tmp/node_modules"; then
    chmod 0755 "$tmp"
    rm -rf "$entry"
    mv "$tmp" "$entry" || rm -rf "$tmp"
  else
    rm -rf "$tmp"
    return 0
  fi
  # ls -t: newest first; the entry just made is first, then the ones kept. The names are hashes.
  # shellcheck disable=SC2012
  while IFS= read -r old; do
    rm -rf "${NODE_MODULES_CACHE:?}/$old"
  done < <(ls -t "$NODE_MODULES_CACHE" | tail -n +$((NODE_MODULES_CACHE_KEEP + 2)))
}
