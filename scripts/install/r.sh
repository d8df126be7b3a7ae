#!/usr/bin/env bash
# R builds and runs: R 4.2 from Debian 12 (r-base-core; Rscript), r-base-dev so that
# install.packages can compile CRAN packages with C/C++/Fortran code, r-cran-jsonlite, which the R
# runner needs, and r-cran-curl, with which the in-algorithm client reaches the service's API over
# its Unix socket. Idempotent: installs only what is missing.
set -euo pipefail
# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/../lib/apt.sh"

need=()
for pkg in r-base-core r-base-dev r-cran-jsonlite r-cran-curl; do
  installed "$pkg" || need+=("$pkg")
done

apt_install "R builds" "${need[@]}"
