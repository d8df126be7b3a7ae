# shellcheck shell=bash
# Shared by the install scripts that make a build seed (source it): a directory, read-only to
# builds, that a new dependency layer starts as a copy of (languages/scala/sbt.sh,
# languages/java/maven.sh), so what it holds is not downloaded for every new algorithm.
# Trusted: made by root, outside any sandbox, from Maven Central only.

# seed_current DIR MADE_FOR: DIR was made for MADE_FOR (its .made-for says so).
seed_current() { [[ $(cat "$1/.made-for" 2>/dev/null) == "$2" ]]; }

# make_seed DIR MADE_FOR WHAT FILL [ARGS…]: runs `FILL SEED SCRATCH ARGS…`, which fills the new
# directory SEED (SCRATCH is an empty directory for its project; its output goes to a log shown
# on failure), then puts SEED in DIR's place, world-readable and written by root only. Never
# fails the install: without a seed, builds download what it would hold, as before.
make_seed() {
  local dir=$1 made_for=$2 what=$3 fill=$4 seed scratch
  shift 4
  local skip="warning: no $what seed in $dir; builds will download it for each new algorithm"
  if [[ $(id -u) -ne 0 ]]; then
    echo "$skip (run as root to make it)" >&2
    return 0
  fi
  install -d -m 0755 "$(dirname "$dir")" || { echo "$skip" >&2; return 0; }
  seed=$(mktemp -d "$(dirname "$dir")/.$(basename "$dir").XXXXXX") || { echo "$skip" >&2; return 0; }
  scratch=$(mktemp -d /tmp/algohost-seed.XXXXXX) || { rm -rf "$seed"; echo "$skip" >&2; return 0; }
  echo "filling the $what seed from Maven Central"
  if (cd "$scratch" && "$fill" "$seed" "$scratch" "$@") >"$scratch.log" 2>&1; then
    chmod -R a+rX,go-w "$seed"
    printf '%s\n' "$made_for" >"$seed/.made-for"
    rm -rf "$dir"
    mv "$seed" "$dir"
  else
    tail -n 30 "$scratch.log" >&2
    rm -rf "$seed"
    echo "$skip" >&2
  fi
  rm -rf "$scratch" "$scratch.log"
}
