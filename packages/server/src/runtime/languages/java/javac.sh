#!/usr/bin/env bash
# A Java build without a pom.xml (see adapter.ts), run by bash -c inside the build sandbox from
# the tree's root: javac --release 17 over src/main/java (else src), then jar.
# Usage: javac.sh CLIENT_JAR   (the in-algorithm client, on the class path)
set -euo pipefail
client_jar=$1

root=src/main/java
[ -d "$root" ] || root=src
mapfile -t sources < <(find "$root" -name '*.java' -type f 2>/dev/null | sort)
if [ ${#sources[@]} -eq 0 ]; then
  echo "error: no pom.xml and no .java file under $root/: nothing to compile" >&2
  exit 1
fi
rm -rf target/classes target/lib target/algorithm.jar
mkdir -p target/classes
classpath=(-cp "$client_jar")
if compgen -G 'lib/*.jar' >/dev/null; then
  classpath=(-cp "lib/*:$client_jar")
  mkdir -p target/lib
  cp lib/*.jar target/lib/
fi
echo "javac --release 17: ${#sources[@]} source files under $root"
javac --release 17 -encoding UTF-8 -d target/classes "${classpath[@]}" "${sources[@]}"
if [ -d src/main/resources ]; then cp -R src/main/resources/. target/classes/; fi
jar --create --file target/algorithm.jar -C target/classes .
echo 'built target/algorithm.jar'
