#!/usr/bin/env bash
# The one install step of the image (deploy/container/Containerfile runs it after copying the
# repository to /opt/algohost): on Debian 12 with Node.js 24 in /usr/local (the node:24 image),
# as root, it installs what an API node or a worker needs and builds the server and the web UI.
# deploy/container/check-recipe.sh runs it the same way in a Debian 12 root file system.
#
# Not in the image, on purpose: PostgreSQL's server, nats-server, the S3 store (a cluster's
# external dependencies, docs/cluster.md), brokers and test browsers (tests only).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/lib/apt.sh
source scripts/lib/apt.sh

if [[ $(id -u) -ne 0 ]]; then
  echo "install.sh installs Debian packages: run it as root (an image build does)" >&2
  exit 1
fi

# JavaScript builds and runners call /usr/bin/node and /usr/bin/npm inside the sandbox, which
# sees /usr (so /usr/local too): links to the base image's Node.js are enough
# (scripts/install/javascript.sh checks them).
for tool in node npm; do
  [[ -e /usr/bin/$tool ]] && continue
  if [[ ! -x /usr/local/bin/$tool ]]; then
    echo "no /usr/bin/$tool and no /usr/local/bin/$tool: the base image must hold Node.js 24" >&2
    exit 1
  fi
  ln -s "../local/bin/$tool" "/usr/bin/$tool"
done

# Slim Debian images drop /usr/share/man, where openjdk's postinst registers its man pages as
# alternatives: it fails without the directory.
mkdir -p /usr/share/man/man1

# The service's own needs: git (repositories, smart HTTP, build checkouts), bubblewrap and
# util-linux (setpriv, prlimit, flock: the sandbox), python3 with venv (the Python runner and
# builds), make and g++ (better-sqlite3 compiles from source below; builds of native gems and R
# packages use them), ca-certificates (builds fetch from package registries over TLS) and
# postgresql-client (`start.js backup|restore` of a cluster use pg_dump and psql); tini, the
# container's PID 1 (Containerfile), collects the sandboxes' orphaned processes.
need=()
for pkg in ca-certificates git bubblewrap util-linux python3 python3-venv make g++ postgresql-client tini; do
  installed "$pkg" || need+=("$pkg")
done
apt_install "the service" "${need[@]}"

# Language toolchains for builds and runners: the same scripts as `npm run setup`.
for script in scripts/install/*.sh; do
  bash "$script"
done

# The npm packages, then the compiled server (esbuild, a dependency) and the web UI (vite, a
# development dependency), then without the development dependencies: the server runs the
# compiled JavaScript and needs none of them.
export npm_config_update_notifier=false
# better-sqlite3 compiles against the headers of the Node.js that runs it: the base image's own
# (the node image has them in /usr/local/include/node), not a download from nodejs.org.
if [[ -z ${npm_config_nodedir:-} && -f /usr/local/include/node/common.gypi ]]; then
  export npm_config_nodedir=/usr/local
fi
echo "installing npm packages (npm ci)"
npm ci --no-audit --no-fund --loglevel=error
node --import tsx scripts/build-server.ts
bash scripts/build-web.sh
npm prune --omit=dev --no-audit --no-fund --loglevel=error
npm cache clean --force --loglevel=error

# Fail the build, not the first start, if something the server loads is missing: --help loads
# every module of the server.
node packages/server/dist/main/start.js --help >/dev/null
bwrap --version >/dev/null
setpriv --version >/dev/null

# The image needs neither the package lists nor the downloaded packages.
apt-get clean
rm -rf /var/lib/apt/lists/* /root/.cache
echo "install.sh: done"
