/**
 * Scala 2.13 and 3.3 with sbt 1.x (the launcher from scripts/install/scala.sh, mounted from
 * /opt/algohost/tools). The Scala version is the build's own `scalaVersion`.
 *
 * The dependency layer holds everything the offline compile reads: the launcher's boot
 * directory (sbt itself) and the Coursier cache (the build's plugins, the libraries, the Scala
 * compiler and its sbt bridge). It is filled (network on) by `sbt package` over a copy of the
 * build definition with a one-object probe source, so code errors show in the compile step.
 * The compile step runs with the layer read-only and no network, makes target/algorithm.jar,
 * and copies the runtime classpath's jars (Scala library, dependencies) to target/lib.
 * Only Maven Central (or the cluster's Maven repository) is used, for sbt and for the build.
 *
 * In-algorithm client: the Java one (com.algorithmia, ../java/runner/client), compiled by the
 * first compile step into target/algohost-client.jar; a global sbt settings file adds that jar
 * to every project's unmanaged jars, so code using it compiles without a build.sbt line. The jar
 * lies under target/, so it is not copied to target/lib (the runner adds it itself).
 *
 * Runner: the Java harness (../java/runner, see the Java adapter) runs Scala classes as they
 * are (a Scala class is a Java class; the Scala library is in target/lib). It is compiled into
 * target/algohost-runner by the last compile step; this folder's runner/ only points there.
 */
import fs from 'node:fs';
import type { Mount } from '../../sandbox/supervisor.js';
import { jvmProxyProperties } from '../../sandbox/egress-proxy.js';
import { INSIDE, type BuildStep, type LanguageAdapter, type StepContext } from '../adapter.js';
import { CLIENT_JAR, compileClientStep, compileHarnessStep, JAVA_HOME, javaHarnessMount, jvmRunner, JVM_PATH } from '../java/adapter.js';

export const TOOLS_DIR = '/opt/algohost/tools';
const SBT_HOME = `${TOOLS_DIR}/sbt`;
/** sbt's global base: *.sbt files there are settings of every project of the build. */
const SBT_GLOBAL = '/tmp/sbt-global';

const SBT_OPTS = [
  '-XX:+UseSerialGC',
  // Builds of algorithms are short: the C1 compiler alone starts sbt markedly faster.
  '-XX:TieredStopAtLevel=1',
  `-Dsbt.boot.directory=${INSIDE.deps}/sbt/boot`,
  '-Dsbt.boot.lock=false',
  `-Dsbt.ivy.home=${INSIDE.deps}/ivy2`,
  `-Dsbt.global.base=${SBT_GLOBAL}`,
  '-Dsbt.server.autostart=false',
  '-Dsbt.supershell=false',
  '-Dsbt.color=false',
  '-Dsbt.log.noformat=true',
  '-Dsbt.ci=true',
].join(' ');

/** Checks for sbt, and points it at the cluster's Maven repository when one is set. */
const PRELUDE = `set -euo pipefail
if ! command -v sbt >/dev/null; then echo 'error: sbt is not installed on this build server (scripts/install/scala.sh installs it into ${SBT_HOME})' >&2; exit 1; fi
if [ ! -f build.sbt ]; then echo 'error: no build.sbt at the repository root: Scala algorithms are built with sbt (see the template build.sbt with its scalaVersion)' >&2; exit 1; fi
if [ -n "\${ALGOHOST_MAVEN_REPOSITORY:-}" ]; then
  printf '[repositories]\\n  algohost-maven: %s\\n' "$ALGOHOST_MAVEN_REPOSITORY" > /tmp/algohost-sbt-repositories
  export SBT_REPOSITORIES=/tmp/algohost-sbt-repositories
fi
`;

// The build definition (*.sbt, project/) with a one-object probe instead of the sources: the
// layer depends on the build definition only, and code errors belong to the compile step.
const RESOLVE = `${PRELUDE}probe=/tmp/algohost-sbt-probe
mkdir -p "$probe/project" "$probe/src/main/scala"
find . -maxdepth 1 -name '*.sbt' -type f -exec cp {} "$probe/" \\;
if [ -d project ]; then find project -maxdepth 1 -type f \\( -name '*.sbt' -o -name '*.scala' -o -name '*.properties' \\) -exec cp {} "$probe/project/" \\; ; fi
printf 'object AlgohostProbe\\n' > "$probe/src/main/scala/AlgohostProbe.scala"
cd "$probe"
sbt package
`;

// `export Runtime/fullClasspath` prints the runtime classpath as the last line starting with '/'.
// Without `Compile / packageBin / artifactPath` in build.sbt, the jar sbt made is copied.
const PACKAGE = `${PRELUDE}rm -rf target/lib target/algorithm.jar
mkdir -p ${SBT_GLOBAL}
printf 'Compile / unmanagedJars += Attributed.blank(file("%s"))\\n' "${INSIDE.src}/${CLIENT_JAR}" > ${SBT_GLOBAL}/algohost-client.sbt
sbt package 'export Runtime/fullClasspath' 2>&1 | tee /tmp/algohost-sbt.log
classpath=$(grep -E '^/' /tmp/algohost-sbt.log | tail -n 1 || true)
if [ ! -f target/algorithm.jar ]; then
  built=$(find target -maxdepth 2 -path 'target/scala-*/*.jar' -not -name '*-sources.jar' -not -name '*-javadoc.jar' | head -n 1)
  if [ -z "$built" ]; then echo 'error: sbt package made no jar under target/' >&2; exit 1; fi
  cp "$built" target/algorithm.jar
  echo "copied $built to target/algorithm.jar"
fi
mkdir -p target/lib
IFS=: read -ra entries <<< "$classpath"
copied=0
for entry in "\${entries[@]}"; do
  case $entry in
    /build/src/target/*) ;;
    *.jar) if [ -f "$entry" ]; then cp "$entry" target/lib/; copied=$((copied + 1)); fi ;;
  esac
done
echo "copied $copied runtime jars (Scala library and dependencies) to target/lib"
`;

const BASH = '/usr/bin/bash';

function repositoryEnv(ctx: StepContext): Record<string, string> {
  return ctx.registries.mavenRepository ? { ALGOHOST_MAVEN_REPOSITORY: ctx.registries.mavenRepository } : {};
}

export const scalaAdapter: LanguageAdapter = {
  folder: 'scala',
  languages: ['scala-2', 'scala-3'],
  // The environment (scala-2.13, scala-3.3) is part of the layer key already.
  dependencyFiles: ['build.sbt', 'project/build.properties', 'project/plugins.sbt', 'project/Dependencies.scala'],

  installDependencies(ctx: StepContext): BuildStep[] {
    if (!ctx.files.has('build.sbt')) return [];
    return [
      {
        title: 'fetch sbt, the Scala compiler and the dependencies of build.sbt',
        argv: [BASH, '-c', RESOLVE],
        // The launcher and Coursier download with the JVM's own HTTP client: its proxy properties.
        env: { ...repositoryEnv(ctx), SBT_OPTS: `${SBT_OPTS} ${jvmProxyProperties()}` },
        network: true,
      },
    ];
  },

  compile(ctx: StepContext): BuildStep[] {
    return [
      compileClientStep(),
      {
        title: 'sbt package (offline) and copy the runtime jars to target/lib',
        argv: [BASH, '-c', PACKAGE],
        env: repositoryEnv(ctx),
        network: false,
      },
      compileHarnessStep(),
    ];
  },

  runner: jvmRunner,

  env() {
    return {
      PATH: `${SBT_HOME}/bin:${JVM_PATH}`,
      ...(JAVA_HOME ? { JAVA_HOME } : {}),
      SBT_OPTS,
      COURSIER_CACHE: `${INSIDE.deps}/coursier`,
      COURSIER_PROGRESS: 'false',
    };
  },

  toolchainMounts(): Mount[] {
    // sbt is absent when scripts/install/scala.sh has not run: the steps then say so in the log.
    return [...(fs.existsSync(SBT_HOME) ? [{ host: TOOLS_DIR, inside: TOOLS_DIR }] : []), javaHarnessMount()];
  },
};
