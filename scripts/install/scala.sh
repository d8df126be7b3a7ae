#!/usr/bin/env bash
# Scala builds: the sbt launcher from Maven Central (org.scala-sbt:sbt-launch) in
# /opt/algohost/tools/sbt, an `sbt` wrapper and a launcher repositories file naming Maven
# Central only (the launcher's built-in list also names hosts that builds cannot reach). sbt
# itself and the Scala compilers are fetched per build into the build's dependency layer.
# Idempotent and fast when installed: downloads only a missing launcher. Needs Java and Maven (java.sh).
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

if [[ -s $JAR && -f $DIR/repositories && -f $DIR/bin/sbt && $(cat "$DIR/repositories") == "$repositories" && $(cat "$DIR/bin/sbt") == "$wrapper" ]]; then
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
