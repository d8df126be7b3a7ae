/**
 * Java (OpenJDK 17, Debian's JDK and Maven).
 *
 * With a pom.xml: the dependency layer is a Maven local repository at /deps/repository, filled
 * (network on) by running `package` once on a copy of the pom files with a one-class probe
 * source, which resolves the dependencies and every plugin `package` needs (a new layer starts
 * as a copy of the read-only seed scripts/install/java.sh makes, so the template's plugins are not
 * downloaded again for every new algorithm); the compile step
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
 * An artifact built before the harness existed, or before it wrote output marks, gets the current
 * one compiled into /tmp when its runner starts.
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
  // eslint-disable-next-line no-restricted-syntax -- start-up: looked for once, when the module loads
  .find((d) => fs.existsSync(`${d}/bin/javac`));

export const JVM_PATH = `${JAVA_HOME ? `${JAVA_HOME}/bin:` : ''}/usr/local/bin:/usr/bin:/bin`;

export const MAVEN_REPOSITORY = `${INSIDE.deps}/repository`;
/**
 * The Maven local repository after `package` of the Java template's pom (scripts/install/java.sh):
 * a new layer starts as a copy of it. Read-only to builds, at the same path inside.
 */
const MAVEN_SEED = '/opt/algohost/tools/maven-seed';
/** The seed, looked for until found (then never again: it is not removed while the service runs). */
let mavenSeedFound = false;
// eslint-disable-next-line no-restricted-syntax -- a stat, repeated only while the seed is missing (builds then download instead)
const mavenSeedInstalled = () => fs.existsSync(`${MAVEN_SEED}/.made-for`);

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

function settingsEnv(registries: RegistrySettings, viaEgressProxy = false): Record<string, string> {
  const xml = mavenSettings(registries, viaEgressProxy);
  return xml ? { ALGOHOST_MAVEN_SETTINGS: xml } : {};
}

const MAVEN_OPTS = '-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djansi.noreset=true';

/** A shell script of this folder, read once at start-up; run by `bash -c` in the sandbox. */
// eslint-disable-next-line no-restricted-syntax -- start-up: only called at module load (the constants below)
const script = (name: string) => fs.readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
/** The Maven steps (maven.sh), the build without a pom (javac.sh), the harness's steps and runner (harness.sh). */
const MAVEN = script('maven.sh');
const JAVAC = script('javac.sh');
const HARNESS = script('harness.sh');

/** The JVM harness's sources (this folder's runner/), seen read-only at HARNESS_INSIDE by Java and Scala steps and runners. */
export const JAVA_HARNESS_DIR = fileURLToPath(new URL('./runner/', import.meta.url));
const HARNESS_INSIDE = '/opt/algohost/harness/java';
/** The in-algorithm client's jar, made by the first compile step (relative to the tree, then the artifact). */
export const CLIENT_JAR = 'target/algohost-client.jar';
/** The Maven extension putting the client on the compile class path (made only for pom.xml builds). */
const MAVEN_EXTENSION_JAR = 'target/algohost-maven.jar';

const BASH = '/usr/bin/bash';

/** Where the compile step leaves the harness's classes, relative to the artifact. */
const HARNESS_CLASSES = 'target/algohost-runner';

export function javaHarnessMount(): Mount {
  return { host: JAVA_HARNESS_DIR, inside: HARNESS_INSIDE };
}

/** The last compile step of Java and Scala builds: the runner harness into target/algohost-runner. */
export function compileHarnessStep(): BuildStep {
  return {
    title: 'compile the runner harness',
    argv: [BASH, '-c', HARNESS, 'harness.sh', 'compile', HARNESS_INSIDE, HARNESS_CLASSES],
    network: false,
  };
}

/** The first compile step of Java and Scala builds: the in-algorithm client, before the code that uses it. */
export function compileClientStep(maven = false): BuildStep {
  return {
    title: 'compile the in-algorithm client (com.algorithmia)',
    argv: [BASH, '-c', HARNESS, 'harness.sh', 'client', HARNESS_INSIDE, CLIENT_JAR, MAVEN_EXTENSION_JAR, ...(maven ? ['maven'] : [])],
    network: false,
  };
}

const JAVA_BIN = `${JAVA_HOME ?? '/usr'}/bin`;

/** The runner of a Java or Scala artifact: the harness on the JVM with the algorithm's jars. */
export function jvmRunner(ctx: RunnerContext): RunnerCommand {
  return {
    // The harness prefers algorithmia.conf's algoname.
    argv: [
      BASH,
      '-c',
      HARNESS,
      'algohost-runner',
      'run',
      HARNESS_INSIDE,
      HARNESS_CLASSES,
      CLIENT_JAR,
      RUNNER_INSIDE.app,
      JAVA_BIN,
      ctx.conf.algoname || ctx.algorithmName,
    ],
    env: { PATH: JVM_PATH, ...(JAVA_HOME ? { JAVA_HOME } : {}) },
    // runner/src/algohost/runner/Main.java writes them (after flushing System.out and System.err),
    // through copies of fds 1 and 2 that harness.sh takes; an artifact whose compiled harness
    // predates them runs the current one, compiled into /tmp.
    outputMarks: true,
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
        argv: [BASH, '-c', MAVEN, 'maven.sh', 'resolve', MAVEN_REPOSITORY, MAVEN_SEED],
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
          argv: [
            BASH,
            '-c',
            MAVEN,
            'maven.sh',
            'package',
            MAVEN_REPOSITORY,
            `${INSIDE.src}/${CLIENT_JAR}`,
            `${INSIDE.src}/${MAVEN_EXTENSION_JAR}`,
          ],
          env: settingsEnv(ctx.registries),
          network: false,
        },
        compileHarnessStep(),
      ];
    }
    return [
      compileClientStep(),
      { title: 'javac --release 17 and jar (no pom.xml)', argv: [BASH, '-c', JAVAC, 'javac.sh', CLIENT_JAR], network: false },
      compileHarnessStep(),
    ];
  },

  runner: jvmRunner,

  toolchainMounts(): Mount[] {
    if (!mavenSeedFound) mavenSeedFound = mavenSeedInstalled();
    return [javaHarnessMount(), ...(mavenSeedFound ? [{ host: MAVEN_SEED, inside: MAVEN_SEED }] : [])];
  },

  env() {
    return {
      PATH: JVM_PATH,
      ...(JAVA_HOME ? { JAVA_HOME } : {}),
      MAVEN_OPTS,
    };
  },
};
