/**
 * Scala 2.13 and 3.3 with sbt 1.x (the launcher from scripts/install/scala.sh, mounted from
 * /opt/algohost/tools). The Scala version is the build's own `scalaVersion`.
 *
 * The dependency layer holds everything the offline compile reads: the launcher's boot
 * directory (sbt itself) and the Coursier cache (the build's plugins, the libraries, the Scala
 * compiler and its sbt bridge). It is filled (network on) by `sbt package` over a copy of the
 * build definition with a one-object probe source, so code errors show in the compile step.
 * A new layer starts as a copy of the environment's seed (read-only, made by root at install
 * time from Maven Central), so sbt and the compiler are not downloaded again for every new
 * algorithm; each layer is still its own, written by its own builds only.
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
/** Per environment, sbt's boot directory and Coursier cache after packaging a one-object build (scripts/install/scala.sh). */
const SBT_SEEDS = `${TOOLS_DIR}/sbt-seed`;
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

const BASH = '/usr/bin/bash';
/** The sbt steps (sbt.sh: checks, resolve, package), read once at start-up; run by `bash -c` in the sandbox. */
/** sbt, looked for until found (then never again: it is not removed while the service runs). */
let sbtFound = false;
// eslint-disable-next-line no-restricted-syntax -- a stat, repeated only while sbt is missing (Scala builds then fail anyway)
const sbtInstalled = () => fs.existsSync(SBT_HOME);
// eslint-disable-next-line no-restricted-syntax -- start-up: read once, when the module loads
const SBT_STEPS = fs.readFileSync(new URL('./sbt.sh', import.meta.url), 'utf8');

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
        argv: [BASH, '-c', SBT_STEPS, 'sbt.sh', 'resolve', SBT_HOME, `${SBT_SEEDS}/${ctx.environment.name}`, INSIDE.deps],
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
        argv: [BASH, '-c', SBT_STEPS, 'sbt.sh', 'package', SBT_HOME, SBT_GLOBAL, `${INSIDE.src}/${CLIENT_JAR}`],
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
    if (!sbtFound) sbtFound = sbtInstalled();
    return [...(sbtFound ? [{ host: TOOLS_DIR, inside: TOOLS_DIR }] : []), javaHarnessMount()];
  },
};
