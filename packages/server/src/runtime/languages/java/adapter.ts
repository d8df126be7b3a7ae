/**
 * Java (OpenJDK 17, Debian's JDK and Maven).
 *
 * With a pom.xml: the dependency layer is a Maven local repository at /deps/repository, filled
 * (network on) by running `package` once on a copy of the pom files with a one-class probe
 * source, which resolves the dependencies and every plugin `package` needs; the compile step
 * then runs Maven offline against it, tests skipped, making target/algorithm.jar and copying
 * the runtime dependency jars to target/lib for the runner.
 * Without a pom.xml: `javac --release 17` over src/main/java (else src), then `jar`.
 *
 * In-algorithm client (runner/client/, package com.algorithmia, shared with Scala): the first
 * compile step makes target/algohost-client.jar, which is on the class path of the algorithm's
 * compilation without a pom line (javac: -cp; Maven: the core extension runner/maven/, loaded
 * with -Dmaven.ext.class.path, adds it as a system-scoped dependency) and of the runner.
 *
 * Runner: the harness (runner/src/algohost/runner/*.java, shared with Scala) is compiled by a
 * last compile step into target/algohost-runner, so the artifact holds everything its runner
 * needs; the runner is `java -cp target/algohost-runner:target/algohost-client.jar:
 * target/algorithm.jar:target/lib/* algohost.runner.Main <Name>`. The harness has its own small
 * JSON codec (no library of its own on the algorithm's class path; the client has its own too).
 * An artifact built before the harness existed gets it compiled into /tmp when its runner starts.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Mount } from '../../sandbox/supervisor.js';
import { EGRESS_PROXY_PORT, jvmProxyProperties } from '../../sandbox/egress-proxy.js';
import {
  INSIDE,
  RUNNER_INSIDE,
  type BuildStep,
  type LanguageAdapter,
  type RegistrySettings,
  type RunnerCommand,
  type RunnerContext,
  type StepContext,
} from '../adapter.js';

/** Debian's OpenJDK 17, named explicitly: another JDK (e.g. a newer Temurin) may own /usr/bin/java. */
export const JAVA_HOME = ['amd64', 'arm64', 'ppc64el', 's390x', 'riscv64']
  .map((a) => `/usr/lib/jvm/java-17-openjdk-${a}`)
  .find((d) => fs.existsSync(`${d}/bin/javac`));

export const JVM_PATH = `${JAVA_HOME ? `${JAVA_HOME}/bin:` : ''}/usr/local/bin:/usr/bin:/bin`;

export const MAVEN_REPOSITORY = `${INSIDE.deps}/repository`;

/** Pinned: the version resolved into the layer is the one the offline step asks for. */
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.6.1';
const MAVEN_FLAGS = ['-B', '-ntp', '-Dstyle.color=never', `-Dmaven.repo.local=${MAVEN_REPOSITORY}`, '-DskipTests'];
const PACKAGE_GOALS = ['package', `${DEPENDENCY_PLUGIN}:copy-dependencies`, '-DincludeScope=runtime', '-DoutputDirectory=target/lib'];

/**
 * A settings.xml sending every repository to the cluster's Maven repository, when one is set,
 * and, in networked steps, every connection through the build egress proxy (Maven's resolver
 * takes its proxy from settings.xml, not from the JVM's proxy properties).
 */
export function mavenSettings(registries: RegistrySettings, viaEgressProxy = false): string | undefined {
  const url = registries.mavenRepository;
  if (!url && !viaEgressProxy) return undefined;
  const esc = (url ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const mirrors = url
    ? `<mirrors><mirror><id>algohost</id><name>cluster Maven repository</name><url>${esc}</url><mirrorOf>*</mirrorOf></mirror></mirrors>`
    : '';
  const proxies = viaEgressProxy
    ? `<proxies><proxy><id>algohost-egress</id><active>true</active><protocol>http</protocol><host>127.0.0.1</host><port>${EGRESS_PROXY_PORT}</port></proxy></proxies>`
    : '';
  return `<settings>${proxies}${mirrors}</settings>\n`;
}

/** Writes the settings (passed in the environment) to a file and names it in $SETTINGS. */
const SETTINGS_PRELUDE = `SETTINGS=()
if [ -n "\${ALGOHOST_MAVEN_SETTINGS:-}" ]; then printf '%s' "$ALGOHOST_MAVEN_SETTINGS" > /tmp/algohost-settings.xml; SETTINGS=(-s /tmp/algohost-settings.xml); fi
`;

function settingsEnv(registries: RegistrySettings, viaEgressProxy = false): Record<string, string> {
  const xml = mavenSettings(registries, viaEgressProxy);
  return xml ? { ALGOHOST_MAVEN_SETTINGS: xml } : {};
}

const MAVEN_OPTS = '-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djansi.noreset=true';

const q = (args: string[]) => args.map((a) => `'${a}'`).join(' ');

/** The JVM harness's sources (this folder's runner/), seen read-only at HARNESS_INSIDE by Java and Scala steps and runners. */
export const JAVA_HARNESS_DIR = fileURLToPath(new URL('./runner/', import.meta.url));
const HARNESS_INSIDE = '/opt/algohost/harness/java';
/** The in-algorithm client's jar, made by the first compile step (relative to the tree, then the artifact). */
export const CLIENT_JAR = 'target/algohost-client.jar';
/** The Maven extension putting the client on the compile class path (made only for pom.xml builds). */
const MAVEN_EXTENSION_JAR = 'target/algohost-maven.jar';

// Every pom of the tree (modules too) with a one-class probe instead of the sources: the layer
// depends on the poms only, and code errors belong to the compile step.
const RESOLVE = `set -euo pipefail
${SETTINGS_PRELUDE}probe=/tmp/algohost-maven-probe
mkdir -p "$probe/src/main/java/algohost"
find . -name pom.xml -type f -not -path '*/target/*' -exec cp --parents {} "$probe/" \\;
printf 'package algohost;\\n\\nfinal class Probe {}\\n' > "$probe/src/main/java/algohost/Probe.java"
cd "$probe"
mvn "\${SETTINGS[@]}" ${q(MAVEN_FLAGS)} ${q(PACKAGE_GOALS)}
`;

// Without <finalName>algorithm</finalName> in the pom, the jar Maven made is copied to target/algorithm.jar.
const MAVEN_PACKAGE = `set -euo pipefail
${SETTINGS_PRELUDE}rm -rf target/lib target/algorithm.jar
mvn -o "\${SETTINGS[@]}" ${q(MAVEN_FLAGS)} ${q(PACKAGE_GOALS)} \
  -Dmaven.ext.class.path=${INSIDE.src}/${MAVEN_EXTENSION_JAR} -Dalgohost.client.jar=${INSIDE.src}/${CLIENT_JAR}
if [ ! -f target/algorithm.jar ]; then
  built=$(find target -maxdepth 1 -name '*.jar' -not -name '*-sources.jar' -not -name '*-javadoc.jar' -not -name '*-tests.jar' | head -n 1)
  if [ -z "$built" ]; then echo 'error: mvn package made no jar in target/ (is <packaging> jar?)' >&2; exit 1; fi
  cp "$built" target/algorithm.jar
  echo "copied $built to target/algorithm.jar"
fi
`;

const JAVAC = `set -euo pipefail
root=src/main/java
[ -d "$root" ] || root=src
mapfile -t sources < <(find "$root" -name '*.java' -type f 2>/dev/null | sort)
if [ \${#sources[@]} -eq 0 ]; then echo "error: no pom.xml and no .java file under $root/: nothing to compile" >&2; exit 1; fi
rm -rf target/classes target/lib target/algorithm.jar
mkdir -p target/classes
classpath=(-cp '${CLIENT_JAR}')
if compgen -G 'lib/*.jar' >/dev/null; then classpath=(-cp 'lib/*:${CLIENT_JAR}'); mkdir -p target/lib; cp lib/*.jar target/lib/; fi
echo "javac --release 17: \${#sources[@]} source files under $root"
javac --release 17 -encoding UTF-8 -d target/classes "\${classpath[@]}" "\${sources[@]}"
if [ -d src/main/resources ]; then cp -R src/main/resources/. target/classes/; fi
jar --create --file target/algorithm.jar -C target/classes .
echo 'built target/algorithm.jar'
`;

const BASH = '/usr/bin/bash';

/** Where the compile step leaves the harness's classes, relative to the artifact. */
const HARNESS_CLASSES = 'target/algohost-runner';

export function javaHarnessMount(): Mount {
  return { host: JAVA_HARNESS_DIR, inside: HARNESS_INSIDE };
}

const HARNESS_JAVAC = `javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 --release 17 -encoding UTF-8 -nowarn`;

const COMPILE_HARNESS = `set -euo pipefail
rm -rf ${HARNESS_CLASSES}
mkdir -p ${HARNESS_CLASSES}
${HARNESS_JAVAC} -d ${HARNESS_CLASSES} ${HARNESS_INSIDE}/src/algohost/runner/*.java
echo 'compiled the runner harness into ${HARNESS_CLASSES}'
`;

/** The last compile step of Java and Scala builds: the runner harness into target/algohost-runner. */
export function compileHarnessStep(): BuildStep {
  return { title: 'compile the runner harness', argv: [BASH, '-c', COMPILE_HARNESS], network: false };
}

// $1 = "maven": also the Maven extension, compiled against the Maven that runs the build.
const COMPILE_CLIENT = `set -euo pipefail
rm -rf target/algohost-client ${CLIENT_JAR} target/algohost-maven ${MAVEN_EXTENSION_JAR}
mkdir -p target/algohost-client
${HARNESS_JAVAC} -d target/algohost-client $(find ${HARNESS_INSIDE}/client -name '*.java' | sort)
jar --create --file ${CLIENT_JAR} -C target/algohost-client .
rm -rf target/algohost-client
echo 'compiled the in-algorithm client (com.algorithmia) into ${CLIENT_JAR}'
if [ "\${1:-}" = maven ]; then
  lib=$(dirname "$(readlink -f "$(command -v mvn)")")/../lib
  mkdir -p target/algohost-maven/META-INF
  ${HARNESS_JAVAC} -cp "$lib/*" -d target/algohost-maven ${HARNESS_INSIDE}/maven/algohost/maven/*.java
  cp -R ${HARNESS_INSIDE}/maven/META-INF/. target/algohost-maven/META-INF/
  jar --create --file ${MAVEN_EXTENSION_JAR} -C target/algohost-maven .
  rm -rf target/algohost-maven
  echo 'compiled the Maven extension that puts it on the class path into ${MAVEN_EXTENSION_JAR}'
fi
`;

/** The first compile step of Java and Scala builds: the in-algorithm client, before the code that uses it. */
export function compileClientStep(maven = false): BuildStep {
  return {
    title: 'compile the in-algorithm client (com.algorithmia)',
    argv: [BASH, '-c', COMPILE_CLIENT, 'algohost-client', ...(maven ? ['maven'] : [])],
    network: false,
  };
}

/**
 * Startup: C2 stays on (a warm runner serves many calls; the harness starts in ~0.1 s either
 * way), the serial collector (one GC thread, least memory), the JDK's class data archive, no
 * hsperfdata files in /tmp.
 */
const JVM_FLAGS = [
  '-XX:+UseSerialGC',
  '-Xshare:auto',
  '-XX:-UsePerfData',
  '-Dfile.encoding=UTF-8',
  '-Dsun.stdout.encoding=UTF-8',
  '-Dsun.stderr.encoding=UTF-8',
  '-Djava.io.tmpdir=/tmp',
];

const JAVA_BIN = `${JAVA_HOME ?? '/usr'}/bin`;

// $1 = the algorithm's name (the harness prefers algorithmia.conf's algoname).
const START_RUNNER = `h=${RUNNER_INSIDE.app}/${HARNESS_CLASSES}
if [ ! -f "$h/algohost/runner/Main.class" ]; then
  h=/tmp/algohost-runner
  echo "this build has no compiled runner harness (it predates it): compiling it into $h" >&2
  mkdir -p "$h" && ${JAVA_BIN}/${HARNESS_JAVAC} -d "$h" ${HARNESS_INSIDE}/src/algohost/runner/*.java >&2 || exit 1
fi
exec ${JAVA_BIN}/java ${JVM_FLAGS.join(' ')} -cp "$h:${RUNNER_INSIDE.app}/${CLIENT_JAR}:${RUNNER_INSIDE.app}/target/algorithm.jar:${RUNNER_INSIDE.app}/target/lib/*" algohost.runner.Main "$1"
`;

/** The runner of a Java or Scala artifact: the harness on the JVM with the algorithm's jars. */
export function jvmRunner(ctx: RunnerContext): RunnerCommand {
  return {
    argv: [BASH, '-c', START_RUNNER, 'algohost-runner', ctx.conf.algoname || ctx.algorithmName],
    env: { PATH: JVM_PATH, ...(JAVA_HOME ? { JAVA_HOME } : {}) },
  };
}

export const javaAdapter: LanguageAdapter = {
  folder: 'java',
  languages: ['java17'],
  dependencyFiles: ['pom.xml'],

  installDependencies(ctx: StepContext): BuildStep[] {
    if (!ctx.files.has('pom.xml')) return [];
    return [
      {
        title: 'resolve the Maven dependencies and build plugins of pom.xml',
        argv: [BASH, '-c', RESOLVE],
        // Plugins that download by themselves use the JVM's proxy properties.
        env: { ...settingsEnv(ctx.registries, true), MAVEN_OPTS: `${MAVEN_OPTS} ${jvmProxyProperties()}` },
        network: true,
      },
    ];
  },

  compile(ctx: StepContext): BuildStep[] {
    if (ctx.files.has('pom.xml')) {
      return [
        compileClientStep(true),
        {
          title: 'mvn package (offline) and copy the runtime dependencies to target/lib',
          argv: [BASH, '-c', MAVEN_PACKAGE],
          env: settingsEnv(ctx.registries),
          network: false,
        },
        compileHarnessStep(),
      ];
    }
    return [
      compileClientStep(),
      { title: 'javac --release 17 and jar (no pom.xml)', argv: [BASH, '-c', JAVAC], network: false },
      compileHarnessStep(),
    ];
  },

  runner: jvmRunner,

  toolchainMounts(): Mount[] {
    return [javaHarnessMount()];
  },

  env() {
    return {
      PATH: JVM_PATH,
      ...(JAVA_HOME ? { JAVA_HOME } : {}),
      MAVEN_OPTS,
    };
  },
};
