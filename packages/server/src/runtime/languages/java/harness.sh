#!/usr/bin/env bash
# The JVM harness's shell steps, for Java and Scala (see adapter.ts), run by bash -c: the first
# two inside the build sandbox from the tree's root, the last as the runner's command. Usage:
#   harness.sh client  HARNESS CLIENT_JAR EXTENSION_JAR [maven]
#       the in-algorithm client (HARNESS/client) into CLIENT_JAR; with "maven", also the Maven
#       extension (HARNESS/maven) that puts it on the class path, into EXTENSION_JAR
#   harness.sh compile HARNESS CLASSES
#       the runner harness (HARNESS/src) into the directory CLASSES
#   harness.sh run     HARNESS CLASSES CLIENT_JAR APP JAVA_BIN NAME
#       the runner: the harness of the artifact APP (compiled into /tmp when the artifact predates
#       it) on JAVA_BIN's JVM with the algorithm's jars, serving the algorithm NAME
set -euo pipefail
step=$1
harness=$2

# The harness is small: the C1 compiler alone and one GC thread compile it fastest.
harness_javac=(javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 --release 17 -encoding UTF-8 -nowarn)

case $step in
  client)
    client_jar=$3 extension_jar=$4
    rm -rf target/algohost-client "$client_jar" target/algohost-maven "$extension_jar"
    mkdir -p target/algohost-client
    mapfile -t sources < <(find "$harness/client" -name '*.java' | sort)
    "${harness_javac[@]}" -d target/algohost-client "${sources[@]}"
    jar --create --file "$client_jar" -C target/algohost-client .
    rm -rf target/algohost-client
    echo "compiled the in-algorithm client (com.algorithmia) into $client_jar"
    if [ "${5:-}" = maven ]; then
      # Compiled against the Maven that runs the build.
      lib=$(dirname "$(readlink -f "$(command -v mvn)")")/../lib
      mkdir -p target/algohost-maven/META-INF
      "${harness_javac[@]}" -cp "$lib/*" -d target/algohost-maven "$harness"/maven/algohost/maven/*.java
      cp -R "$harness/maven/META-INF/." target/algohost-maven/META-INF/
      jar --create --file "$extension_jar" -C target/algohost-maven .
      rm -rf target/algohost-maven
      echo "compiled the Maven extension that puts it on the class path into $extension_jar"
    fi
    ;;
  compile)
    classes=$3
    rm -rf "$classes"
    mkdir -p "$classes"
    "${harness_javac[@]}" -d "$classes" "$harness"/src/algohost/runner/*.java
    echo "compiled the runner harness into $classes"
    ;;
  run)
    app=$5 java_bin=$6 name=$7
    h=$app/$3
    if [ ! -f "$h/algohost/runner/Main.class" ]; then
      h=/tmp/algohost-runner
      echo "this build has no compiled runner harness (it predates it): compiling it into $h" >&2
      mkdir -p "$h"
      "$java_bin/${harness_javac[0]}" "${harness_javac[@]:1}" -d "$h" "$harness"/src/algohost/runner/*.java >&2
    fi
    # C2 stays on (a warm runner serves many calls; the harness starts in ~0.1 s either way), the
    # serial collector (one GC thread, least memory), the JDK's class data archive, no
    # hsperfdata files in /tmp.
    exec "$java_bin/java" -XX:+UseSerialGC -Xshare:auto -XX:-UsePerfData -Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8 \
      -Dsun.stderr.encoding=UTF-8 -Djava.io.tmpdir=/tmp \
      -cp "$h:$app/$4:$app/target/algorithm.jar:$app/target/lib/*" algohost.runner.Main "$name"
    ;;
  *)
    echo "harness.sh: unknown step $step" >&2
    exit 2
    ;;
esac
