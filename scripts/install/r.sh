#!/usr/bin/env bash
# R builds and runs: R 4.2 from Debian 12 (r-base-core; Rscript), r-base-dev so that
# install.packages can compile CRAN packages with C/C++/Fortran code, r-cran-jsonlite, which the R
# runner needs, and r-cran-curl, with which the in-algorithm client reaches the service's API over
# its Unix socket. Idempotent: installs only what is missing.
set -euo pipefail

installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]; }

need=()
for pkg in r-base-core r-base-dev r-cran-jsonlite r-cran-curl; do
  installed "$pkg" || need+=("$pkg")
done
((${#need[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "missing Debian packages for R builds: ${need[*]} (run as root or install them)" >&2
  exit 1
fi
echo "installing Debian packages for R builds: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
