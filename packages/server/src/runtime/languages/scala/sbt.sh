#!/usr/bin/env bash
# The sbt steps of a Scala build (see adapter.ts), run by bash -c inside the build sandbox from
# the tree's root. Usage:
#   sbt.sh resolve SBT_HOME SEED DEPS             fill the layer DEPS: sbt, the compiler, the dependencies (network on),
#                                                  starting from a copy of SEED (scripts/install/scala.sh) when there is one
#   sbt.sh package SBT_HOME SBT_GLOBAL CLIENT_JAR sbt package offline, the runtime jars to target/lib;
#                                                  SBT_GLOBAL/*.sbt put CLIENT_JAR on every project's class path
# The cluster's Maven repository, when one is set, comes in $ALGOHOST_MAVEN_REPOSITORY.
set -euo pipefail
step=$1
sbt_home=$2

if ! command -v sbt >/dev/null; then
  echo "error: sbt is not installed on this build server (scripts/install/scala.sh installs it into $sbt_home)" >&2
  exit 1
fi
if [ ! -f build.sbt ]; then
  echo 'error: no build.sbt at the repository root: Scala algorithms are built with sbt (see the template build.sbt with its scalaVersion)' >&2
  exit 1
fi
if [ -n "${ALGOHOST_MAVEN_REPOSITORY:-}" ]; then
  printf '[repositories]\n  algohost-maven: %s\n' "$ALGOHOST_MAVEN_REPOSITORY" >/tmp/algohost-sbt-repositories
  export SBT_REPOSITORIES=/tmp/algohost-sbt-repositories
fi

case $step in
  resolve)
    seed=$3 deps=$4
    # What the seed holds (sbt, this environment's compiler and its bridge) is not downloaded again.
    if [ -f "$seed/.made-for" ]; then
      cp -R "$seed/." "$deps/"
      rm -f "$deps/.made-for"
      echo "copied the sbt seed ($(cat "$seed/.made-for")) into the layer"
    fi
    # The build definition (*.sbt, project/) with a one-object probe instead of the sources: the
    # layer depends on the build definition only, and code errors belong to the compile step.
    probe=/tmp/algohost-sbt-probe
    mkdir -p "$probe/project" "$probe/src/main/scala"
    find . -maxdepth 1 -name '*.sbt' -type f -exec cp {} "$probe/" \;
    if [ -d project ]; then
      find project -maxdepth 1 -type f \( -name '*.sbt' -o -name '*.scala' -o -name '*.properties' \) -exec cp {} "$probe/project/" \;
    fi
    printf 'object AlgohostProbe\n' >"$probe/src/main/scala/AlgohostProbe.scala"
    cd "$probe"
    sbt package
    ;;
  package)
    sbt_global=$3 client_jar=$4
    rm -rf target/lib target/algorithm.jar
    mkdir -p "$sbt_global"
    printf 'Compile / unmanagedJars += Attributed.blank(file("%s"))\n' "$client_jar" >"$sbt_global/algohost-client.sbt"
    # `export Runtime/fullClasspath` prints the runtime classpath as the last line starting with '/'.
    sbt package 'export Runtime/fullClasspath' 2>&1 | tee /tmp/algohost-sbt.log
    classpath=$(grep -E '^/' /tmp/algohost-sbt.log | tail -n 1 || true)
    # Without `Compile / packageBin / artifactPath` in build.sbt, the jar sbt made is copied.
    if [ ! -f target/algorithm.jar ]; then
      built=$(find target -maxdepth 2 -path 'target/scala-*/*.jar' -not -name '*-sources.jar' -not -name '*-javadoc.jar' | head -n 1)
      if [ -z "$built" ]; then
        echo 'error: sbt package made no jar under target/' >&2
        exit 1
      fi
      cp "$built" target/algorithm.jar
      echo "copied $built to target/algorithm.jar"
    fi
    mkdir -p target/lib
    IFS=: read -ra entries <<<"$classpath"
    copied=0
    for entry in "${entries[@]}"; do
      case $entry in
        /build/src/target/*) ;;
        *.jar)
          if [ -f "$entry" ]; then
            cp "$entry" target/lib/
            copied=$((copied + 1))
          fi
          ;;
      esac
    done
    echo "copied $copied runtime jars (Scala library and dependencies) to target/lib"
    ;;
  *)
    echo "sbt.sh: unknown step $step" >&2
    exit 2
    ;;
esac
