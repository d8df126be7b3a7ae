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

# What the compiled harness speaks beyond docs/compatibility.md §4, written next to its classes by
# the compile step: output marks (catalog/templates/README.md), which the adapters announce for
# every runner. The run step compiles the current harness into /tmp for an artifact whose
# harness predates them, as for one built before the harness existed.
protocol=output-marks

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
    echo "$protocol" >"$classes/algohost/runner/protocol"
    echo "compiled the runner harness into $classes"
    ;;
  run)
    app=$5 java_bin=$6 name=$7
    h=$app/$3
    if [ ! -f "$h/algohost/runner/Main.class" ] || [ "$(cat "$h/algohost/runner/protocol" 2>/dev/null)" != "$protocol" ]; then
      # On stdout: before the sentinel, that is the runner's load output (the service keeps no
      # stderr from before the first call).
      if [ -f "$h/algohost/runner/Main.class" ]; then
        echo "this build's runner harness predates $protocol: compiling the current one into /tmp/algohost-runner"
      else
        echo "this build has no compiled runner harness (it predates it): compiling it into /tmp/algohost-runner"
      fi
      h=/tmp/algohost-runner
      mkdir -p "$h"
      "$java_bin/${harness_javac[0]}" "${harness_javac[@]:1}" -d "$h" "$harness"/src/algohost/runner/*.java
    fi
    # The harness's own copies of fds 0, 1 and 2, taken before any user code runs (Main.Channels):
    # requests come from the copy of fd 0, which then reads /dev/null; the sentinel and the output
    # marks go to the copies of fds 1 and 2. bash picks free fds (10 and up: the service hands the
    # runner fds 3, 4, ...); java.io is opened to the class path for Main to wrap them.
    exec {requests}<&0 {stdout}>&1 {stderr}>&2 </dev/null
    # The output mark goes to Main as a system property (which it clears) instead of the
    # environment, which the algorithm and its subprocesses see and the JVM cannot change.
    mark=()
    if [ -n "${ALGOHOST_OUTPUT_MARK:-}" ]; then mark=(-Dalgohost.runner.mark="$ALGOHOST_OUTPUT_MARK"); fi
    unset ALGOHOST_OUTPUT_MARK
    # A full-network runner reaches the internet only through the node's egress proxy, which the
    # JVM's HTTP clients take from system properties rather than from HTTPS_PROXY.
    proxy=()
    if [[ "${HTTPS_PROXY:-}" =~ ^http://([^:/]+):([0-9]+)/?$ ]]; then
      proxy=(-Dhttp.proxyHost="${BASH_REMATCH[1]}" -Dhttp.proxyPort="${BASH_REMATCH[2]}"
        -Dhttps.proxyHost="${BASH_REMATCH[1]}" -Dhttps.proxyPort="${BASH_REMATCH[2]}" -Dhttp.nonProxyHosts=)
    fi
    # C2 stays on (a warm runner serves many calls; the harness starts in ~0.1 s either way), the
    # serial collector (one GC thread, least memory), the JDK's class data archive, no
    # hsperfdata files in /tmp.
    exec "$java_bin/java" -XX:+UseSerialGC -Xshare:auto -XX:-UsePerfData -Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8 \
      -Dsun.stderr.encoding=UTF-8 -Djava.io.tmpdir=/tmp \
      --add-opens java.base/java.io=ALL-UNNAMED -Dalgohost.runner.fds="$requests,$stdout,$stderr" "${mark[@]}" "${proxy[@]}" \
      -cp "$h:$app/$4:$app/target/algorithm.jar:$app/target/lib/*" algohost.runner.Main "$name"
    ;;
  *)
    echo "harness.sh: unknown step $step" >&2
    exit 2
    ;;
esac
