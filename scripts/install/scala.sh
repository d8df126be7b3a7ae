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
# shellcheck source=scripts/lib/seed.sh
source "$(dirname "$0")/../lib/seed.sh"

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

sbt_made_for() { echo "sbt $SBT_VERSION scala $1"; }

# The seed of one environment: sbt packages a one-object build with its scalaVersion, with the
# boot directory, Ivy home and Coursier cache in the seed.
fill_sbt_seed() { # seed scratch scala-version
  local seed=$1 project=$2 scala=$3
  mkdir -p "$project/project" "$project/src/main/scala"
  printf 'scalaVersion := "%s"\n' "$scala" >"$project/build.sbt"
  printf 'sbt.version=%s\n' "$SBT_VERSION" >"$project/project/build.properties"
  printf 'object AlgohostSeed\n' >"$project/src/main/scala/AlgohostSeed.scala"
  HOME=$project COURSIER_CACHE=$seed/coursier COURSIER_PROGRESS=false \
    SBT_OPTS="-Dsbt.boot.directory=$seed/sbt/boot -Dsbt.ivy.home=$seed/ivy2 -Dsbt.global.base=$project/.sbt-global -Dsbt.server.autostart=false -Dsbt.supershell=false -Dsbt.color=false -Dsbt.ci=true" \
    "$DIR/bin/sbt" package
}

all_seeded() {
  local pair
  for pair in "${SEEDS[@]}"; do seed_current "$SEED_DIR/${pair%%:*}" "$(sbt_made_for "${pair#*:}")" || return 1; done
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

for pair in "${SEEDS[@]}"; do
  env=${pair%%:*} scala=${pair#*:}
  made_for=$(sbt_made_for "$scala")
  seed_current "$SEED_DIR/$env" "$made_for" || make_seed "$SEED_DIR/$env" "$made_for" "sbt ($env)" fill_sbt_seed "$scala"
done
