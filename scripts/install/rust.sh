#!/usr/bin/env bash
# Rust for builds: a toolchain at /opt/algohost/rust (bin/cargo, bin/rustc, …) that the sandbox
# user (uid 65534) can run directly. rustup's proxies cannot serve it: they need ~/.rustup, and
# root's home is private. Sources, the first that exists:
#   1. root's rustup stable toolchain (or $ALGOHOST_RUST_SOURCE, a toolchain directory):
#      a hard-link copy (`cp -al`, instant on the same filesystem), else a plain copy;
#   2. Debian's rustc/cargo: rustc-web/cargo-web when the archive has them (a current Rust in
#      bookworm-security), else rustc/cargo (bookworm's 1.63 is too old for crates.io's sparse
#      index and today's Cargo.lock format); bin/ then links to /usr/bin.
# Idempotent and fast: a stamp names the source and its rustc version; a current one ends here.
set -euo pipefail

DEST=/opt/algohost/rust
STAMP=$DEST/.algohost-source
host_triple="$(uname -m)-unknown-linux-gnu"

find_rustup_toolchain() {
  if [[ -n ${ALGOHOST_RUST_SOURCE:-} ]]; then
    echo "$ALGOHOST_RUST_SOURCE"
    return
  fi
  local home
  for home in "${RUSTUP_HOME:-}" /root/.rustup "${HOME:-/root}/.rustup"; do
    [[ -n $home && -x $home/toolchains/stable-$host_triple/bin/rustc ]] || continue
    # -P: the directory itself, not a name such as 1.95.0-… that links to it.
    (cd "$home/toolchains/stable-$host_triple" && pwd -P)
    return
  done
}

stamp_ok() { [[ -f $STAMP && $(cat "$STAMP") == "$1" && -x $DEST/bin/cargo && -x $DEST/bin/rustc ]]; }

# Makes $DEST from a finished temporary directory, replacing any older one in one rename.
publish() {
  local tmp=$1 stamp=$2
  echo "$stamp" >"$tmp/.algohost-source"
  chmod 755 "$tmp"
  if [[ -e $DEST ]]; then
    local old="$DEST.old.$$"
    mv "$DEST" "$old"
    mv "$tmp" "$DEST"
    rm -rf "$old"
  else
    mv "$tmp" "$DEST"
  fi
}

mkdir -p "$(dirname "$DEST")"
chmod 755 "$(dirname "$DEST")"
rm -rf "$DEST".tmp.* "$DEST".old.*

src=$(find_rustup_toolchain || true)
if [[ -n $src ]]; then
  stamp="rustup $src $("$src/bin/rustc" -V)"
  stamp_ok "$stamp" && exit 0
  echo "rust: copying the toolchain $src to $DEST"
  tmp="$DEST.tmp.$$"
  cp -al "$src" "$tmp" 2>/dev/null || {
    rm -rf "$tmp"
    cp -a "$src" "$tmp"
  }
  # The sandbox user must read and traverse every file; a toolchain is root's, mode 755/644.
  chmod -R o+rX "$tmp"
  publish "$tmp" "$stamp"
else
  if [[ ! -x /usr/bin/cargo || ! -x /usr/bin/rustc ]]; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "rust: no rustup toolchain and no Debian rustc/cargo; run as root to install them" >&2
      exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    pkgs=(rustc cargo)
    # Not `| grep -q`: grep would stop reading at the match, apt-cache's next write gets SIGPIPE and
    # pipefail turns the match into a failure (then bookworm's 1.63 was installed instead).
    if [[ $(apt-cache policy cargo-web 2>/dev/null) =~ Candidate:\ [0-9] ]]; then pkgs=(rustc-web cargo-web); fi
    echo "rust: installing Debian packages ${pkgs[*]}"
    apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
  stamp="debian $(/usr/bin/rustc -V)"
  stamp_ok "$stamp" && exit 0
  tmp="$DEST.tmp.$$"
  mkdir -p "$tmp/bin"
  for tool in cargo rustc rustdoc; do
    [[ -x /usr/bin/$tool ]] && ln -s "/usr/bin/$tool" "$tmp/bin/$tool"
  done
  publish "$tmp" "$stamp"
fi

# The sandbox runs it as uid 65534 with no access to /root: prove that works.
if ! setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/tmp "$DEST/bin/rustc" -V >/dev/null; then
  echo "rust: $DEST/bin/rustc does not run as uid 65534" >&2
  exit 1
fi
echo "rust: $("$DEST/bin/rustc" -V) at $DEST"
