# shellcheck shell=bash
# Shared by the install scripts (source it): Debian packages, installed only when missing.

# True when the Debian package is installed.
installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]; }

# apt_install WHAT PACKAGE…: installs the packages as root; as anyone else, says what is missing
# (for WHAT) and fails. Nothing to do without packages.
apt_install() {
  local what=$1
  shift
  (($#)) || return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing Debian packages for $what: $* (run as root or install them)" >&2
    exit 1
  fi
  echo "installing Debian packages for $what: $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
