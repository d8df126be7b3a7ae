#!/usr/bin/env bash
# Scala builds: the sbt launcher from Maven Central (org.scala-sbt:sbt-launch) in
# /opt/algohost/tools/sbt, an `sbt` wrapper and a launcher repositories file naming Maven
# Central only (the launcher's built-in list also names hosts that builds cannot reach). sbt
# itself and the Scala compilers go into each build's dependency layer; so that a new layer does
# not download them again, a seed per environment (/opt/algohost/tools/sbt-seed/scala-2.13 and
# scala-3.3: sbt's boot directory and Coursier cache after packaging the template's build) is made
# here once, read-only to builds, and copied into a new layer first (languages/scala/sbt.sh).
# Idempotent and fast when installed: downloads only a missing launcher or seed. Needs Java and
# Maven (java.sh).
set -euo pipefail

SBT_VERSION=1.10.2
TOOLS=/opt/algohost/tools
DIR=$TOOLS/sbt
JAR=$DIR/sbt-launch-$SBT_VERSION.jar

# Writes a file only when its content differs (keeps reruns free of writes).
put() { # path mode content
  if [[ ! -f $1 || $(cat "$1") != "$3" ]]; then
    printf '%s\n' "$3" > "$1.tmp" && chmod "$2" "$1.tmp" && mv "$1.tmp" "$1"
  fi
}

repositories='[repositories]
  maven-central'

wrapper="#!/bin/sh
# sbt $SBT_VERSION launcher, installed by algohost scripts/install/scala.sh. \$SBT_REPOSITORIES names
# a launcher repositories file (default: Maven Central only); it overrides the build's resolvers.
exec \"\${JAVA_HOME:+\$JAVA_HOME/bin/}java\" -Xss4m -XX:MaxRAMPercentage=60 \\
  -Dsbt.repository.config=\"\${SBT_REPOSITORIES:-$DIR/repositories}\" -Dsbt.override.build.repos=true \\
  \$SBT_OPTS -jar \"$JAR\" \"\$@\""

# The environments' Scala versions: the templates' scalaVersion (packages/server/catalog/templates).
SEEDS=(scala-2.13:2.13.14 scala-3.3:3.3.4)
SEED_DIR=$TOOLS/sbt-seed

seeded() { # environment scala-version
  [[ $(cat "$SEED_DIR/$1/.made-for" 2>/dev/null) == "sbt $SBT_VERSION scala $2" ]]
}

# sbt packages a one-object build with that scalaVersion, its boot directory, Ivy home and
# Coursier cache in a new seed (trusted: this build and Maven Central only, outside any sandbox).
make_seed() { # environment scala-version
  local env=$1 scala=$2 tmp project
  # Run from an `||` list, where set -e does not apply: each failure returns by itself.
  tmp=$(mktemp -d "$SEED_DIR/.$env.XXXXXX") || return 1
  project=$(mktemp -d /tmp/algohost-sbt-seed.XXXXXX) || return 1
  mkdir -p "$project/project" "$project/src/main/scala"
  printf 'scalaVersion := "%s"\n' "$scala" >"$project/build.sbt"
  printf 'sbt.version=%s\n' "$SBT_VERSION" >"$project/project/build.properties"
  printf 'object AlgohostSeed\n' >"$project/src/main/scala/AlgohostSeed.scala"
  echo "filling the sbt seed for $env (sbt $SBT_VERSION, Scala $scala) from Maven Central"
  (cd "$project" && HOME=$project COURSIER_CACHE=$tmp/coursier COURSIER_PROGRESS=false \
    SBT_OPTS="-Dsbt.boot.directory=$tmp/sbt/boot -Dsbt.ivy.home=$tmp/ivy2 -Dsbt.global.base=$project/.sbt-global -Dsbt.server.autostart=false -Dsbt.supershell=false -Dsbt.color=false -Dsbt.ci=true" \
    "$DIR/bin/sbt" package >"$project/sbt.log" 2>&1) || {
    tail -n 30 "$project/sbt.log" >&2
    rm -rf "$tmp" "$project"
    echo "could not fill the sbt seed for $env" >&2
    return 1
  }
  rm -rf "$project"
  # Builds read it as the sandbox user: world-readable, owned and written by root only.
  chmod -R a+rX,go-w "$tmp"
  printf 'sbt %s scala %s\n' "$SBT_VERSION" "$scala" >"$tmp/.made-for"
  rm -rf "${SEED_DIR:?}/$env"
  mv "$tmp" "$SEED_DIR/$env"
}

all_seeded() {
  local pair
  for pair in "${SEEDS[@]}"; do seeded "${pair%%:*}" "${pair#*:}" || return 1; done
}

if [[ -s $JAR && -f $DIR/repositories && -f $DIR/bin/sbt && $(cat "$DIR/repositories") == "$repositories" && $(cat "$DIR/bin/sbt") == "$wrapper" ]] && all_seeded; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "cannot install the sbt launcher into $DIR: run as root" >&2
  exit 1
fi

install -d -m 0755 /opt/algohost "$TOOLS" "$DIR" "$DIR/bin"
if [[ ! -s $JAR ]]; then
  echo "installing the sbt $SBT_VERSION launcher from Maven Central into $DIR"
  repo=$(mktemp -d /tmp/algohost-sbt-m2.XXXXXX)
  trap 'rm -rf "$repo"' EXIT
  MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.noreset=true" mvn -B -q -ntp -Dstyle.color=never -Dmaven.repo.local="$repo" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
    -Dartifact="org.scala-sbt:sbt-launch:$SBT_VERSION:jar" -DoutputDirectory="$DIR" -Dmdep.overWriteReleases=true
  chmod 0644 "$JAR"
fi
put "$DIR/repositories" 0644 "$repositories"
put "$DIR/bin/sbt" 0755 "$wrapper"

install -d -m 0755 "$SEED_DIR"
for pair in "${SEEDS[@]}"; do
  # Without a seed, Scala builds still work: each new layer downloads sbt and the compiler itself.
  seeded "${pair%%:*}" "${pair#*:}" || make_seed "${pair%%:*}" "${pair#*:}" ||
    echo "warning: no sbt seed for ${pair%%:*}; its builds will download sbt and the Scala compiler each time" >&2
done
