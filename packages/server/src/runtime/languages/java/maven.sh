#!/usr/bin/env bash
# The Maven steps of a Java build with a pom.xml (see adapter.ts), run by bash -c inside the
# build sandbox from the tree's root. Usage:
#   maven.sh resolve REPOSITORY SEED          fill the Maven local repository REPOSITORY (network on), starting
#                                              from a copy of SEED (scripts/install/java.sh) when there is one
#   maven.sh package REPOSITORY CLIENT_JAR EXTENSION_JAR
#                                              mvn package offline; CLIENT_JAR and EXTENSION_JAR are
#                                              the in-algorithm client and the Maven extension adding it
# Maven settings (a mirror, the egress proxy) come in $ALGOHOST_MAVEN_SETTINGS when there are any.
set -euo pipefail
step=$1
repository=$2

# Pinned: the version resolved into the layer is the one the offline step asks for.
flags=(-B -ntp -Dstyle.color=never "-Dmaven.repo.local=$repository" -DskipTests)
goals=(package org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies -DincludeScope=runtime -DoutputDirectory=target/lib)

settings=()
if [ -n "${ALGOHOST_MAVEN_SETTINGS:-}" ]; then
  printf '%s' "$ALGOHOST_MAVEN_SETTINGS" >/tmp/algohost-settings.xml
  settings=(-s /tmp/algohost-settings.xml)
fi

case $step in
  resolve)
    seed=$3
    # What the seed holds (the template's plugins) is not downloaded again.
    if [ -f "$seed/.made-for" ]; then
      mkdir -p "$repository"
      cp -R "$seed/repository/." "$repository/"
      echo "copied the Maven seed ($(cat "$seed/.made-for")) into the layer"
    fi
    # Every pom of the tree (modules too) with a one-class probe instead of the sources: the
    # layer depends on the poms only, and code errors belong to the compile step.
    probe=/tmp/algohost-maven-probe
    mkdir -p "$probe/src/main/java/algohost"
    find . -name pom.xml -type f -not -path '*/target/*' -exec cp --parents {} "$probe/" \;
    printf 'package algohost;\n\nfinal class Probe {}\n' >"$probe/src/main/java/algohost/Probe.java"
    cd "$probe"
    mvn "${settings[@]}" "${flags[@]}" "${goals[@]}"
    ;;
  package)
    rm -rf target/lib target/algorithm.jar
    mvn -o "${settings[@]}" "${flags[@]}" "${goals[@]}" "-Dmaven.ext.class.path=$4" "-Dalgohost.client.jar=$3"
    # Without <finalName>algorithm</finalName> in the pom, the jar Maven made is copied to target/algorithm.jar.
    if [ ! -f target/algorithm.jar ]; then
      built=$(find target -maxdepth 1 -name '*.jar' -not -name '*-sources.jar' -not -name '*-javadoc.jar' -not -name '*-tests.jar' | head -n 1)
      if [ -z "$built" ]; then
        echo 'error: mvn package made no jar in target/ (is <packaging> jar?)' >&2
        exit 1
      fi
      cp "$built" target/algorithm.jar
      echo "copied $built to target/algorithm.jar"
    fi
    ;;
  *)
    echo "maven.sh: unknown step $step" >&2
    exit 2
    ;;
esac
