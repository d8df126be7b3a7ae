# shellcheck shell=bash
# install_node_modules: node_modules for this checkout's package-lock.json (source it from the
# repository's root): the root's, and those npm ci puts in workspaces (packages/*/node_modules, for
# versions that cannot be hoisted). `npm ci` takes about two minutes on these machines, most of it
# compiling better-sqlite3 (no prebuilt binary is reachable), so a copy of the result is kept
# outside the checkout, one per lock file, Node ABI and platform, and a fresh clone of the same
# lock copies it in (seconds) instead. Only ever filled from a finished `npm ci`; never fails the
# install.
NODE_MODULES_CACHE=${ALGOHOST_NODE_MODULES_CACHE:-/var/cache/algohost/node_modules}
# Entries kept besides the one just made (older lock files), newest first.
NODE_MODULES_CACHE_KEEP=2

install_node_modules() {
  local stamp=node_modules/.algohost-lock-hash want entry
  # The lock, the Node ABI (native modules) and the platform decide what npm ci makes.
  # "layout 2": entries hold the workspaces' node_modules too.
  want=$( (cat package-lock.json; node -p 'process.versions.modules + process.platform + process.arch'; echo 'layout 2') | sha256sum | cut -d' ' -f1)
  [[ -f $stamp && $(cat "$stamp") == "$want" ]] && return 0
  entry=$NODE_MODULES_CACHE/$want
  if [[ -f $entry/node_modules/.algohost-lock-hash ]] && [[ $(cat "$entry/node_modules/.algohost-lock-hash") == "$want" ]]; then
    echo "installing npm packages (copied from $entry, made by npm ci for this package-lock.json)"
    if restore_node_modules "$entry"; then
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

# save_node_modules ENTRY: copies the node_modules into the cache as ENTRY (whole or not at all),
# then drops the oldest entries. A cache that cannot be written only costs the next clone a npm ci.
save_node_modules() {
  local entry=$1 tmp old
  if ! install -d -m 0755 "$NODE_MODULES_CACHE" 2>/dev/null; then
    echo "note: $NODE_MODULES_CACHE cannot be written; the next fresh clone runs npm ci again" >&2
    return 0
  fi
  tmp=$(mktemp -d "$NODE_MODULES_CACHE/.new.XXXXXX") || return 0
  if copy_node_modules . "$tmp"; then
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

# copy_node_modules FROM TO: node_modules and every packages/*/node_modules of FROM into TO, at
# the same paths.
copy_node_modules() {
  local from=$1 to=$2 dir
  cp -a "$from/node_modules" "$to/node_modules" || return 1
  for dir in "$from"/packages/*/node_modules; do
    [[ -d $dir ]] || continue
    dir=${dir#"$from"/}
    mkdir -p "$to/$(dirname "$dir")" && cp -a "$from/$dir" "$to/$dir" || return 1
  done
}

# restore_node_modules ENTRY: this checkout's node_modules (the root's and the workspaces') replaced
# by ENTRY's. On a failure none is left, so npm ci starts clean.
restore_node_modules() {
  local entry=$1
  rm -rf node_modules packages/*/node_modules
  if copy_node_modules "$entry" .; then return 0; fi
  rm -rf node_modules packages/*/node_modules
  return 1
}
