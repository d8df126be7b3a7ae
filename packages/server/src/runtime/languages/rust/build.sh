#!/bin/sh
# The shell steps of a Rust build (see adapter.ts), run by sh -c inside the build sandbox from
# the tree's root. Usage:
#   build.sh prepare   DEPS WORK SRC CONFIG_FILE...  WORK: a copy of SRC made of symlinks, every .rs file a stub
#   build.sh keep-lock WORK LOCK                     keep the resolved Cargo.lock as LOCK, remove WORK
#   build.sh use-layer LOCK TARGET                   the layer's Cargo.lock and compiled dependencies into the tree
#   build.sh client    HARNESS CLIENT_DIR            the in-algorithm client crate (HARNESS/algorithmia) as an rlib
#   build.sh harness   HARNESS SRC CRATE BINARY CARGO...
#                                                    the runner harness crate CRATE for the package at SRC,
#                                                    built as BINARY; CARGO... is cargo with its registry options
set -eu
step=$1
shift

case $step in
  prepare)
    deps=$1 work=$2 src=$3
    shift 3
    for f in .cargo "$@"; do
      if [ -L "$f" ]; then
        echo "error: $f is a symbolic link; Cargo configuration must be a regular file" >&2
        exit 1
      fi
    done
    rm -rf "$work"
    cp -as "$src" "$work"
    rm -rf "$work/target" "$work/Cargo.lock"
    if [ -f Cargo.lock ] && [ ! -L Cargo.lock ]; then cp Cargo.lock "$work/Cargo.lock"; fi
    printf '#![allow(dead_code)]\nfn main() {}\n' >"$deps/stub.rs"
    # shellcheck disable=SC2016 # $1 and "$f" belong to the inner sh: the stub, then the files.
    find "$work" -name '*.rs' ! -type d -exec sh -c 's=$1; shift; for f; do rm "$f" && cp "$s" "$f"; done' stub "$deps/stub.rs" {} +
    rm "$deps/stub.rs"
    echo "stubbed $(find "$work" -name '*.rs' ! -type d | wc -l) .rs files of the workspace"
    ;;
  keep-lock)
    cp "$1/Cargo.lock" "$2"
    rm -rf "$1"
    ;;
  use-layer)
    rm -f Cargo.lock && cp "$1" Cargo.lock
    rm -rf target && cp -a "$2" target
    find . -path ./target -prune -o -type f -exec touch -c {} +
    ;;
  client)
    mkdir -p "$2"
    exec "$RUSTC" --edition 2021 --crate-type rlib --crate-name algorithmia -C opt-level=3 --cap-lints allow --out-dir "$2" "$1/algorithmia/lib.rs"
    ;;
  harness)
    harness=$1 src=$2 h=$3 binary=$4
    shift 4
    # "$@" = cargo and its registry options. cargo tree's first line is the package itself
    # ("name vX.Y.Z (/build/src)"), the next ones its direct normal dependencies.
    if ! tree=$("$@" tree --offline --locked -e normal --depth 1 --prefix none --charset ascii); then
      echo 'error: cannot list the dependencies of the package (cargo tree) to build its runner' >&2
      exit 1
    fi
    name=$(printf '%s\n' "$tree" | head -n 1 | cut -d ' ' -f 1)
    if ! printf '%s\n' "$tree" | tail -n +2 | grep -q '^serde_json v1[.]'; then
      echo "error: $name does not depend on serde_json: the runner calls algorithm::apply(serde_json::Value), so Cargo.toml needs serde_json = \"1\" under [dependencies] (see the template)" >&2
      exit 1
    fi
    rm -rf "$h"
    mkdir -p "$h/src"
    cp "$harness/src/main.rs" "$h/src/main.rs"
    cp Cargo.lock "$h/Cargo.lock"
    cat >"$h/Cargo.toml" <<TOML
# Made by the build: the runner harness for package $name.
[package]
name = "algohost-runner"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "algorithm"
path = "src/main.rs"

[dependencies]
algorithm = { package = "$name", path = "$src" }
serde_json = "1"

[workspace]

TOML
    # Profiles are read from the workspace root only: the package's own apply to the harness build.
    awk '/^[[:space:]]*\[/ { keep = ($0 ~ /^[[:space:]]*\[[[:space:]]*profile[.]/) } keep' Cargo.toml >>"$h/Cargo.toml"
    if ! "$@" build --release --offline --manifest-path "$h/Cargo.toml"; then
      echo 'error: the runner harness did not build: src/lib.rs must have pub fn apply(input: serde_json::Value) -> Result<serde_json::Value, String> (see the template)' >&2
      exit 1
    fi
    # Runners of this artifact read it: this harness ends each call's output with the output mark
    # (an artifact built before the marks has none, and its runners take one call at a time).
    printf 'output-marks\n' >"$binary.protocol"
    echo "built the runner $binary for $name"
    ;;
  *)
    echo "build.sh: unknown step $step" >&2
    exit 2
    ;;
esac
