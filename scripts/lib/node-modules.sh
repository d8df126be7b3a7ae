# shellcheck shell=bash
# install_node_modules: node_modules for this checkout's package-lock.json (source it from the
# repository's root): the root's, and those npm ci puts in workspaces (packages/*/node_modules, for
# versions that cannot be hoisted). `npm ci` takes most of a minute on these machines, so a copy
# of the result is kept outside the checkout, one per lock file, Node ABI and platform, and a fresh
# clone of the same lock copies it in (seconds) instead. Only ever filled from a finished `npm ci`; never fails the
# install. What it holds runs as the server, so an entry someone else could have written is not
# used (cache_entry_trusted).

NODE_MODULES_CACHE=${ALGOHOST_NODE_MODULES_CACHE:-/var/cache/algohost/node_modules}
# Entries kept besides the one just made (older lock files), newest first.
NODE_MODULES_CACHE_KEEP=2

install_node_modules() {
  local stamp=node_modules/.algohost-lock-hash want entry
  # The lock, the Node ABI (native modules) and the platform decide what npm ci makes; `node` is
  # the one the scripts run on (scripts/lib/node.sh's use_node came first).
  # "layout 2": entries hold the workspaces' node_modules too.
  want=$( (cat package-lock.json; node -p 'process.versions.modules + process.platform + process.arch'; echo 'layout 2') | sha256sum | cut -d' ' -f1)
  [[ $(cat "$stamp" 2>/dev/null) == "$want" ]] && return 0
  entry=$NODE_MODULES_CACHE/$want
  # The stamp is written before an entry is saved: an entry without it is not one of ours.
  if [[ $(cat "$entry/node_modules/.algohost-lock-hash" 2>/dev/null) == "$want" ]]; then
    if ! cache_entry_trusted "$entry"; then
      echo "warning: $entry is not used: it or something in it belongs to another user or may be written by others; running npm ci" >&2
    elif restore_node_modules "$entry"; then
      echo "installed npm packages (copied from $entry, made by npm ci for this package-lock.json)"
      touch "$entry"
      return 0
    else
      echo "warning: copying $entry failed; running npm ci instead" >&2
    fi
  fi
  echo "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
  save_node_modules "$entry"
}

# cache_entry_trusted ENTRY: the cache directory, ENTRY and everything in ENTRY belong to this user
# and nobody else may write them (symlinks aside: their own mode means nothing). A cache shared
# with other local users (ALGOHOST_NODE_MODULES_CACHE) could otherwise hand the server their code.
cache_entry_trusted() {
  local me
  me=$(id -u)
  [[ -z $(find "$NODE_MODULES_CACHE" -maxdepth 0 \( ! -user "$me" -o -perm /022 \) -print) ]] &&
    [[ -z $(find "$1" \( ! -user "$me" -o \( ! -type l -perm /022 \) \) -print -quit) ]]
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
  if ! copy_node_modules . "$tmp"; then
    rm -rf "$tmp"
    return 0
  fi
  chmod 0755 "$tmp"
  rm -rf "$entry"
  # -T: if the old entry could not be removed, fail instead of moving the new one inside it.
  mv -T "$tmp" "$entry" 2>/dev/null || rm -rf "$tmp"
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
  rm -rf node_modules packages/*/node_modules
  copy_node_modules "$1" . && return 0
  rm -rf node_modules packages/*/node_modules
  return 1
}
