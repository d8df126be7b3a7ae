#!/usr/bin/env bash
# Installs what the service and its tests need on a fresh Debian machine (run as root): Debian
# packages, Node.js 24 where the machine's node is older (scripts/lib/node.sh), the language
# toolchains, then the npm packages for that Node. Fast when everything is already there: it only
# installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/apt.sh

need=()
command -v git >/dev/null || need+=(git)
command -v make >/dev/null || need+=(make)
command -v g++ >/dev/null || need+=(g++)
command -v python3 >/dev/null || need+=(python3)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v runuser >/dev/null || need+=(util-linux)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v setpriv >/dev/null || need+=(util-linux)
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)

apt_install "the service" "${need[@]}"

# The Node.js everything below and the server run on; the npm packages' native modules are built
# for it and the node_modules cache is keyed on its ABI.
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
install_node
use_node

# Language toolchains for builds and runners: one script per language in scripts/install/.
for script in scripts/install/*.sh; do
  [[ -e $script ]] && bash "$script"
done

# npm packages: reused while package-lock.json is unchanged, and copied from a cache outside the
# checkout into a fresh clone of the same lock (scripts/lib/node-modules.sh).
source scripts/lib/node-modules.sh
install_node_modules

# The web UI the server serves at / (packages/web/dist), rebuilt only when its sources changed.
bash scripts/build-web.sh
