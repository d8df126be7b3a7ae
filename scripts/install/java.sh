#!/usr/bin/env bash
# Java builds: OpenJDK 17 (javac, jar) and Maven from Debian. Idempotent: installs only what is missing.
set -euo pipefail
# shellcheck source=scripts/lib/apt.sh
source "$(dirname "$0")/../lib/apt.sh"
# shellcheck source=scripts/lib/seed.sh
source "$(dirname "$0")/../lib/seed.sh"

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

# The template's pom, placeholders filled, packaged with one probe class: maven.sh's goals.
fill_maven_seed() { # seed scratch
  local seed=$1 project=$2
  mkdir -p "$project/src/main/java/algohost"
  sed -e 's/{{ALGO_OWNER}}/seed/g' -e 's/{{ALGO_NAME_LOWER}}/seed/g' "$template" >"$project/pom.xml"
  printf 'package algohost;\n\nfinal class Seed {}\n' >"$project/src/main/java/algohost/Seed.java"
  MAVEN_OPTS="-Djansi.noreset=true" mvn -B -q -ntp -Dstyle.color=never "-Dmaven.repo.local=$seed/repository" -DskipTests \
    package org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies -DincludeScope=runtime -DoutputDirectory=target/lib
}

made_for="pom $(sha256sum "$template" | cut -d' ' -f1)"
seed_current /opt/algohost/tools/maven-seed "$made_for" ||
  make_seed /opt/algohost/tools/maven-seed "$made_for" "Maven (the Java template's plugins)" fill_maven_seed
