#!/usr/bin/env bash
# Java builds: OpenJDK 17 (javac, jar) and Maven from Debian. Idempotent: installs only what is missing.
set -euo pipefail
# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/../lib/apt.sh"

need=()
[[ -x /usr/bin/javac && -x /usr/bin/jar ]] && /usr/bin/javac -version 2>&1 | grep -q ' 17\.' || need+=(openjdk-17-jdk-headless)
[[ -x /usr/bin/mvn ]] || need+=(maven)

apt_install "Java builds" "${need[@]}"

# A seed of the Maven local repository: what `package` of the Java template's pom reads (its
# pinned plugins, copy-dependencies), fetched once from Maven Central here, read-only to builds
# and copied into a new layer first (languages/java/maven.sh), so that a new algorithm's build
# does not download them again. Remade when the template's pom changes. Without it (no Maven
# Central while installing) builds still work: each new layer downloads the plugins itself.
template=$(cd "$(dirname "$0")/../.." && pwd)/packages/server/catalog/templates/java/pom.xml
seed=/opt/algohost/tools/maven-seed
made_for="pom $(sha256sum "$template" | cut -d' ' -f1)"
if [[ $(cat "$seed/.made-for" 2>/dev/null) != "$made_for" ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "cannot make the Maven seed in $seed: run as root" >&2
    exit 1
  fi
  install -d -m 0755 /opt/algohost /opt/algohost/tools
  tmp=$(mktemp -d /opt/algohost/tools/.maven-seed.XXXXXX)
  project=$(mktemp -d /tmp/algohost-maven-seed.XXXXXX)
  trap 'rm -rf "$tmp" "$project"' EXIT
  mkdir -p "$project/src/main/java/algohost"
  sed -e 's/{{ALGO_OWNER}}/seed/g' -e 's/{{ALGO_NAME_LOWER}}/seed/g' "$template" >"$project/pom.xml"
  printf 'package algohost;\n\nfinal class Seed {}\n' >"$project/src/main/java/algohost/Seed.java"
  echo "filling the Maven seed (the Java template's plugins) from Maven Central"
  # The goals of maven.sh's steps.
  if (cd "$project" && MAVEN_OPTS="-Djansi.noreset=true" mvn -B -q -ntp -Dstyle.color=never "-Dmaven.repo.local=$tmp/repository" -DskipTests \
    package org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies -DincludeScope=runtime -DoutputDirectory=target/lib >"$project/mvn.log" 2>&1); then
    chmod -R a+rX,go-w "$tmp"
    printf '%s\n' "$made_for" >"$tmp/.made-for"
    rm -rf "$seed"
    mv "$tmp" "$seed"
  else
    tail -n 30 "$project/mvn.log" >&2
    echo "warning: no Maven seed; Java builds will download Maven's plugins for each new algorithm" >&2
  fi
fi
