#!/usr/bin/env bash
# Checks the image recipe (deploy/container/Containerfile) for real on a machine without a
# container engine or a reachable docker.io: it imitates the base image, does what the
# Containerfile does, and proves the result serves the core loop.
#
#   1. reads the Containerfile, refusing any instruction it does not act on (so the recipe cannot
#      grow a step this check skips) and any base image other than the one it imitates;
#   2. makes the base: a Debian 12 root file system like debian:bookworm-slim (mmdebstrap,
#      minbase, no manual pages or docs; the tarball is cached in /var/cache/algohost-test) with
#      the Node.js 24 `npm run setup` installs (scripts/lib/node.sh: the official build, headers
#      included) where node:24-bookworm-slim has it (/usr/local/bin, npm in
#      /usr/local/lib/node_modules, headers in /usr/local/include/node);
#   3. COPY: the repository as Git sees it (tracked and untracked, not ignored: what .dockerignore
#      leaves in the build context) into the WORKDIR;
#   4. RUN: deploy/container/install.sh inside it (bubblewrap as the container: own mount, PID,
#      IPC and UTS namespaces, /proc, /dev, /sys and the host's resolv.conf; the host's network);
#   5. CMD: starts the server inside it with the image's ENV (the embedded default: one process,
#      SQLite) on a free port, then: /healthz, a user and a key, a Python and a JavaScript
#      algorithm, each cloned, pushed (the build runs in the image's sandbox) and called with
#      curl; then SIGTERM to the server (pid 1 of its PID namespace, as in a container), and it
#      removes everything it made.
#
# Run as root on Debian 12 after `npm run setup` (this repository's test machines):
#   bash deploy/container/check-recipe.sh
# Slow (minutes: Debian packages and toolchains, npm ci compiling better-sqlite3), so not part of
# `npm test`; docs/cluster.md §7 says when it was last run. ALGOHOST_RECIPE_KEEP=1 keeps the root
# file system for a look afterwards (its path is printed).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
CONTAINERFILE=$REPO/deploy/container/Containerfile
CACHE=/var/cache/algohost-test
BASE_IMAGE=docker.io/library/node:24-bookworm-slim
T0=$(date +%s)

say() { printf '[%4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
fail() {
  say "FAILED: $*" >&2
  exit 1
}

[[ $(id -u) -eq 0 ]] || fail "run as root (it makes a root file system and runs apt in it)"
for tool in mmdebstrap bwrap curl git tar; do
  command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install mmdebstrap bubblewrap curl git)"
done
# shellcheck source=scripts/lib/node.sh
source "$REPO/scripts/lib/node.sh"
node24=$NODE_HOME
node_is_current /usr/bin/node && [[ -f /usr/include/node/common.gypi ]] && node24=/usr
node_is_current "$node24/bin/node" || fail "no Node.js 24 in $NODE_HOME or /usr (npm run setup installs it)"
[[ -f $node24/include/node/common.gypi ]] || fail "no Node.js headers in $node24/include/node"
[[ -x /usr/bin/node && -d /usr/lib/node_modules/npm ]] || fail "no npm in /usr/lib/node_modules (the base image's npm is copied from there)"

# --- 1. The Containerfile: one instruction a line, no continuations.
workdir=/ copied=0 run_script='' port='' cmd_json=''
build_env=() run_env=()
while IFS= read -r line || [[ -n $line ]]; do
  [[ -z ${line//[[:space:]]/} || $line =~ ^[[:space:]]*# ]] && continue
  [[ $line == *\\ ]] && fail "Containerfile: line continuations are not supported here: $line"
  instruction=${line%% *} argument=${line#* }
  case $instruction in
    FROM) [[ $argument == "$BASE_IMAGE" ]] || fail "Containerfile: FROM $argument, but this check imitates $BASE_IMAGE" ;;
    WORKDIR) workdir=$argument ;;
    COPY) [[ $argument == '. .' && $workdir != / ]] || fail "Containerfile: only 'COPY . .' into a WORKDIR is imitated here: $line" ;;
    RUN)
      [[ $copied == 0 && $argument =~ ^bash\ ([a-z/_.-]+\.sh)$ ]] || fail "Containerfile: one 'RUN bash <script>' is imitated here: $line"
      run_script=${BASH_REMATCH[1]} copied=1 run_env=("${build_env[@]}")
      ;;
    ENV)
      [[ $argument =~ ^[A-Z_][A-Z0-9_]*=[^[:space:]\"\']*$ ]] || fail "Containerfile: ENV NAME=value, one a line: $line"
      build_env+=("$argument")
      ;;
    EXPOSE) port=$argument ;;
    CMD) cmd_json=$argument ;;
    *) fail "Containerfile: $instruction is not imitated by this check: $line" ;;
  esac
done <"$CONTAINERFILE"
[[ -n $run_script && -n $cmd_json && $port =~ ^[0-9]+$ ]] || fail "Containerfile: needs RUN, EXPOSE and CMD"
mapfile -d '' -t cmd < <(/usr/bin/node -e 'for (const a of JSON.parse(process.argv[1])) process.stdout.write(a + "\0")' "$cmd_json")
say "Containerfile: FROM $BASE_IMAGE, WORKDIR $workdir, RUN bash $run_script, EXPOSE $port, CMD ${cmd[*]}"

# --- 2. The base image.
# Like debian:bookworm-slim: minbase, the same sources, no manual pages, documentation or locales.
debootstrap_args=(
  --mode=root --variant=minbase
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*'
  bookworm
)
sources=(
  'deb http://deb.debian.org/debian bookworm main'
  'deb http://deb.debian.org/debian bookworm-updates main'
  'deb http://deb.debian.org/debian-security bookworm-security main'
)
key=$(printf '%s\n' "${debootstrap_args[@]}" "${sources[@]}" | sha256sum | cut -c1-12)
tarball=$CACHE/bookworm-slim-$key.tar
mkdir -p "$CACHE"
if [[ -s $tarball ]]; then
  say "base: cached $tarball"
else
  say "base: mmdebstrap bookworm (minbase) into $tarball"
  mmdebstrap --quiet --format=tar "${debootstrap_args[@]}" "$tarball.tmp" "${sources[@]}"
  mv "$tarball.tmp" "$tarball"
fi

ROOT=$(mktemp -d /var/tmp/algohost-recipe.XXXXXX)
server_pid=''
cleanup() {
  local status=$?
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  if [[ ${ALGOHOST_RECIPE_KEEP:-} == 1 ]]; then
    say "kept the root file system: $ROOT"
  else
    # Every mount was in the container's own mount namespace, gone with it: this removes files only.
    rm -rf --one-file-system "$ROOT"
  fi
  rm -rf "$WORK"
  exit "$status"
}
WORK=$(mktemp -d /tmp/algohost-recipe-client.XXXXXX)
trap cleanup EXIT
tar -xf "$tarball" -C "$ROOT"
chmod 755 "$ROOT"

# Node.js where node:24-bookworm-slim has it.
install -m 0755 "$node24/bin/node" "$ROOT/usr/local/bin/node"
mkdir -p "$ROOT/usr/local/lib/node_modules"
cp -a /usr/lib/node_modules/npm "$ROOT/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
# Its headers too (the node image's tarball has include/node): native modules compile against them.
mkdir -p "$ROOT/usr/local/include"
cp -a "$node24/include/node" "$ROOT/usr/local/include/node"
say "base: $(du -sh "$ROOT" | cut -f1) with Node.js $("$node24/bin/node" --version) in /usr/local"

# --- 3. COPY . . (into WORKDIR)
mkdir -p "$ROOT$workdir"
git -C "$REPO" ls-files -z --cached --others --exclude-standard |
  tar -C "$REPO" --null --files-from=- --ignore-failed-read -cf - | tar -C "$ROOT$workdir" -xf -
say "COPY: $(git -C "$REPO" ls-files --cached --others --exclude-standard | wc -l) files into $workdir"

# This machine's own certificate authorities (/usr/local/share/ca-certificates): where its
# registries are reached through a TLS-intercepting proxy, apt's ca-certificates (so Maven's and
# Java's trust store) and npm (NODE_EXTRA_CA_CERTS) must trust that proxy inside the image too,
# as a build behind such a proxy would need. A build with a direct connection needs neither.
build_extra=()
shopt -s nullglob
local_cas=(/usr/local/share/ca-certificates/*.crt)
shopt -u nullglob
if ((${#local_cas[@]})); then
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cp "${local_cas[@]}" "$ROOT/usr/local/share/ca-certificates/"
  build_extra=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
  say "added this machine's ${#local_cas[@]} local CA certificate(s) for the build: ${local_cas[*]##*/}"
fi

# The container: what a container engine gives a build step or a privileged container (what
# worker.yaml asks for), as bubblewrap options. Run as real root, bwrap makes no user namespace,
# so the sandboxes inside can make theirs (a chroot could not: the kernel refuses user namespaces
# to a chrooted process). /proc is mounted by a shell before the command, not by bwrap's --proc,
# which masks parts of it read-only: the kernel then refuses the sandboxes' own /proc mounts, as
# it does in an unprivileged container (worker.yaml, "an unmasked /proc").
container() { # ENV-ASSIGNMENT… -- [BWRAP-OPTION…] COMMAND…
  local env=(--setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --setenv HOME /root)
  while [[ $1 != -- ]]; do
    env+=(--setenv "${1%%=*}" "${1#*=}")
    shift
  done
  shift
  local options=()
  while [[ $1 == --* ]]; do
    options+=("$1")
    [[ $1 == --info-fd ]] && options+=("$2") && shift
    shift
  done
  # shellcheck disable=SC2016 # $@ is the inner shell's
  bwrap --bind "$ROOT" / --dir /proc --dev /dev --bind /sys /sys \
    --ro-bind /etc/resolv.conf /etc/resolv.conf --ro-bind /etc/hosts /etc/hosts \
    --unshare-pid --unshare-ipc --unshare-uts --hostname algohost-recipe --die-with-parent \
    --clearenv "${env[@]}" --chdir "$workdir" "${options[@]}" \
    /bin/sh -c 'mount -t proc proc /proc && exec "$@"' container "$@"
}

# --- 4. RUN
say "RUN bash $run_script (its output: $WORK/install.log)"
t=$(date +%s)
if ! container "${run_env[@]}" "${build_extra[@]}" -- /bin/bash "$run_script" >"$WORK/install.log" 2>&1; then
  tail -n 40 "$WORK/install.log" >&2
  fail "RUN bash $run_script"
fi
grep -E '^(installing|rust:|install.sh)' "$WORK/install.log" | sed 's/^/         /'
say "RUN: done in $(($(date +%s) - t)) s; the image is $(du -sh --one-file-system "$ROOT" | cut -f1)"

# --- 5. CMD, on a free port (others may be using the EXPOSEd one on this machine).
free_port=$(/usr/bin/node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
API=http://127.0.0.1:$free_port
# --as-pid-1: CMD (tini, then the server) is pid 1 of its PID namespace, as in a container.
container "${build_env[@]}" ALGOHOST_PORT="$free_port" -- --info-fd 9 --as-pid-1 "${cmd[@]}" >"$WORK/server.log" 2>&1 9>"$WORK/info" &
outer=$!
say "CMD: ${cmd[*]} with ${build_env[*]} ALGOHOST_PORT=$free_port"
for _ in $(seq 600); do
  curl -sf "$API/healthz" >/dev/null && break
  kill -0 "$outer" 2>/dev/null || {
    cat "$WORK/server.log" >&2
    fail "the server exited"
  }
  sleep 0.2
done
server_pid=$(/usr/bin/node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))["child-pid"])' "$WORK/info")
say "healthz: $(curl -sf "$API/healthz") (server pid $server_pid on the host)"

json() { /usr/bin/node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }
ADMIN=$(cat "$ROOT/var/lib/algohost/initial-admin-key")
curl -sf -XPOST "$API/v1/users" -H "Authorization: Simple $ADMIN" -H 'Content-Type: application/json' \
  -d '{"username": "alice", "email": "alice@example.com"}' >/dev/null || fail "creating a user"
KEY=$(curl -sf -XPOST "$API/v1/users/alice/keys" -H "Authorization: Simple $ADMIN" -H 'Content-Type: application/json' -d '{}' | json key)
say "made user alice and an API key"
ENC=$(/usr/bin/node -e 'console.log(encodeURIComponent(process.argv[1]))' "$KEY")

# An algorithm of a language from its template: create, clone, edit, push (the build runs in the
# image's sandbox), call the built commit. JavaScript too: the image's Node.js is in /usr/local,
# and JavaScript builds and runners call /usr/bin/node and /usr/bin/npm (install.sh links them).
core_loop() { # NAME LANGUAGE SOURCE-FILE [COMMENT-MARK of that file]
  local name=$1 language=$2 file=$3 sha result
  curl -sf -XPOST "$API/v1/algorithms/alice" -H "Authorization: Simple $KEY" -H 'Content-Type: application/json' \
    -d "{\"name\": \"$name\", \"settings\": {\"language\": \"$language\", \"environment\": \"cpu\"}}" >/dev/null ||
    fail "creating the $language algorithm alice/$name"
  git clone -q "http://alice:$ENC@127.0.0.1:$free_port/git/alice/$name.git" "$WORK/$name"
  (
    cd "$WORK/$name"
    echo "${4:-#} built by check-recipe.sh" >>"$file"
    git -c user.name=Alice -c user.email=alice@example.com commit -qam 'check the image recipe'
    git push -o wait 2>&1 | grep -E 'remote: (algohost|Build)' | sed 's/^/         /'
  ) || fail "git push of alice/$name"
  sha=$(git -C "$WORK/$name" rev-parse HEAD)
  result=$(curl -s -XPOST "$API/v1/algo/alice/$name/$sha" -H "Authorization: Simple $KEY" -H 'Content-Type: text/plain' -d 'world')
  say "call alice/$name ($language): $result"
  [[ $(json result <<<"$result") == 'hello world' ]] || {
    tail -n 30 "$WORK/server.log" >&2
    fail "the call of alice/$name did not answer \"hello world\""
  }
}
core_loop Hello python3-1 src/Hello.py
core_loop HelloJs javascript src/HelloJs.js //

say "stopping the server (SIGTERM)"
kill -TERM "$server_pid"
for _ in $(seq 300); do
  kill -0 "$outer" 2>/dev/null || break
  sleep 0.2
done
if kill -0 "$outer" 2>/dev/null; then fail "the server did not stop within 60 s of SIGTERM"; fi
wait "$outer" || fail "the server exited with status $? on SIGTERM"
server_pid=''
say "OK: the recipe builds an image that serves healthz, push, build and call ($(($(date +%s) - T0)) s in all)"
