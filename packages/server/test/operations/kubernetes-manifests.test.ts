/**
 * The Kubernetes manifests of deploy/kubernetes/ (docs/cluster.md), checked without a cluster:
 * every YAML document is validated against the Kubernetes OpenAPI schemas (kubernetes-models,
 * which compiles them with ajv), type-checked against the same package's declarations so that a
 * misspelt field fails too (the schemas allow unknown fields; the API server's strict field
 * validation would refuse them), and read for what the schemas cannot know: every ALGOHOST_*
 * name is a setting of config.ts and the settings of each role load, what one object names
 * (ConfigMap, Secret, claim, port) exists, selectors match the labels, probes ask /healthz, and
 * the containers start the image of deploy/container/Containerfile as built (CMD, WORKDIR, port),
 * and the worker pods (where full-network runners run) reach the internet, DNS and the node's
 * own services but no other cluster service, private range or metadata address.
 * Each kind of breakage is also shown to fail.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { loadConfig, SETTINGS } from '../../src/config/config.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const DIR = path.join(REPO, 'deploy/kubernetes');

interface Manifest {
  /** Where it came from: the file and the document's index in it. */
  source: string;
  object: Record<string, any>;
}

function readManifests(): Manifest[] {
  const out: Manifest[] = [];
  for (const file of fs.readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f))) {
    const docs = parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8'));
    docs.forEach((doc, i) => {
      if (doc.errors.length) throw new Error(`${file} #${i}: ${doc.errors[0]!.message}`);
      const object = doc.toJS() as Record<string, any> | null;
      if (object !== null) out.push({ source: `${file} #${i}`, object });
    });
  }
  return out;
}

/** The kubernetes-models module of an object: its directory is the apiVersion ("v1", "apps/v1"). */
function modelPath(object: Record<string, any>): string {
  return `kubernetes-models/${String(object.apiVersion)}/${String(object.kind)}`;
}

/** Schema validation: the problems, one line each. */
async function schemaProblems(manifests: Manifest[]): Promise<string[]> {
  const problems: string[] = [];
  for (const { source, object } of manifests) {
    if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string' || !/^[A-Za-z]+$/.test(object.kind)) {
      problems.push(`${source}: no apiVersion and kind`);
      continue;
    }
    let Model: new (data: unknown) => { validate(): void };
    try {
      Model = ((await import(modelPath(object))) as Record<string, any>)[object.kind];
    } catch {
      problems.push(`${source}: ${object.apiVersion} ${object.kind} is not a Kubernetes kind`);
      continue;
    }
    try {
      new Model(object).validate();
    } catch (err) {
      problems.push(`${source}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/**
 * Unknown fields: each object as a TypeScript literal of its kind's interface. Excess-property
 * checks reach every level of a fresh literal, so `readinessprobe:` is an error naming the field.
 */
function fieldProblems(manifests: Manifest[]): string[] {
  const file = path.join(DIR, '__manifests__.ts');
  const lines: string[] = [];
  const sources: string[] = [];
  manifests.forEach(({ source, object }, i) => {
    lines.push(`import type { I${object.kind} as T${i} } from '${modelPath(object)}';`);
    lines.push(`export const m${i}: T${i} = ${JSON.stringify(object)};`);
    sources.push(source, source);
  });
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (f) => (f === file ? text : read(f));
  host.fileExists = (f) => f === file || ts.sys.fileExists(f);
  host.getSourceFile = (f, lang, ...rest) => (f === file ? ts.createSourceFile(f, text, lang) : getSourceFile(f, lang, ...rest));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
    return `${sources[line] ?? '?'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

const SETTING_NAMES = new Set(SETTINGS.map((s) => s.env));

/** What a container's environment holds, from its env and envFrom. */
function containerEnv(container: Record<string, any>, byName: Map<string, Manifest>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const source = byName.get(`${kind}/${ref?.name}`)?.object;
    Object.assign(env, source?.data ?? {}, source?.stringData ?? {});
  }
  for (const e of container.env ?? []) {
    if (typeof e.value === 'string') env[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    const secret = ref && byName.get(`Secret/${ref.name}`)?.object;
    const value = secret && { ...secret.data, ...secret.stringData }[ref.key];
    if (typeof value === 'string') env[e.name] = value;
  }
  return env;
}

/** Placeholder secrets as values of the right shape, for loading the settings. */
function withPlaceholdersFilled(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    out[k] = !v.includes('CHANGE-ME')
      ? v
      : k === 'ALGOHOST_CLUSTER_KEY'
        ? 'A'.repeat(43) + '='
        : v.replaceAll('CHANGE-ME', 'a-secret-of-24-characters');
  }
  return out;
}

/** The checks the schemas cannot make. */
function crossProblems(manifests: Manifest[]): string[] {
  const problems: string[] = [];
  const byName = new Map(manifests.map((m) => [`${m.object.kind}/${m.object.metadata?.name}`, m]));
  // What containers load whole (envFrom): every key of those is a setting. A Secret read key by
  // key (secretKeyRef, the NATS passwords) has keys of its own.
  const loadedWhole = new Set(
    manifests.flatMap((m) =>
      (m.object.spec?.template?.spec?.containers ?? []).flatMap((c: Record<string, any>) =>
        (c.envFrom ?? []).map((f: Record<string, any>) =>
          f.configMapRef ? `ConfigMap/${f.configMapRef.name}` : `Secret/${f.secretRef?.name}`,
        ),
      ),
    ),
  );
  for (const { source, object } of manifests) {
    if ((object.kind === 'ConfigMap' || object.kind === 'Secret') && loadedWhole.has(`${object.kind}/${object.metadata?.name}`)) {
      for (const name of Object.keys({ ...object.data, ...object.stringData })) {
        if (!SETTING_NAMES.has(name)) problems.push(`${source}: ${name} is not an algohost setting (config.ts)`);
      }
    }
    if (object.kind === 'Deployment') {
      const spec = object.spec ?? {};
      const labels = spec.template?.metadata?.labels ?? {};
      for (const [k, v] of Object.entries(spec.selector?.matchLabels ?? {})) {
        if (labels[k] !== v) problems.push(`${source}: the selector ${k}=${String(v)} does not match the pod template's labels`);
      }
      const pod = spec.template?.spec ?? {};
      const volumes = new Set((pod.volumes ?? []).map((v: { name: string }) => v.name));
      for (const v of pod.volumes ?? []) {
        const claim = v.persistentVolumeClaim?.claimName;
        if (claim && !byName.has(`PersistentVolumeClaim/${claim}`)) problems.push(`${source}: no PersistentVolumeClaim ${claim}`);
      }
      for (const c of pod.containers ?? []) {
        for (const from of c.envFrom ?? []) {
          const [kind, ref] = from.configMapRef ? ['ConfigMap', from.configMapRef] : ['Secret', from.secretRef];
          if (!byName.has(`${kind}/${ref?.name}`)) problems.push(`${source}: no ${kind} ${ref?.name}`);
        }
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (!ref) continue;
          const secret = byName.get(`Secret/${ref.name}`)?.object;
          if (!secret) problems.push(`${source}: no Secret ${ref.name}`);
          else if (!(ref.key in { ...secret.data, ...secret.stringData }))
            problems.push(`${source}: no key ${ref.key} in the Secret ${ref.name}`);
        }
        for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) problems.push(`${source}: no volume ${m.name}`);
        const ports = new Set((c.ports ?? []).map((p: { name?: string }) => p.name));
        for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
          const get = c[probe]?.httpGet;
          if (get?.path !== '/healthz') problems.push(`${source}: ${c.name}'s ${probe} does not ask /healthz`);
          if (typeof get?.port === 'string' && !ports.has(get.port)) problems.push(`${source}: ${c.name}'s ${probe} names no port of it`);
        }
        const env = containerEnv(c, byName);
        for (const name of Object.keys(env)) {
          if (name.startsWith('ALGOHOST_') && !SETTING_NAMES.has(name)) problems.push(`${source}: ${name} is not an algohost setting`);
        }
        try {
          loadConfig(withPlaceholdersFilled(env), []);
        } catch (err) {
          problems.push(`${source}: ${c.name}'s settings do not load: ${(err as Error).message}`);
        }
      }
    }
    if (object.kind === 'Service') {
      const selector = object.spec?.selector ?? {};
      const target = manifests.find(
        (m) =>
          m.object.kind === 'Deployment' &&
          Object.entries(selector).every(([k, v]) => m.object.spec?.template?.metadata?.labels?.[k] === v),
      );
      if (!target) problems.push(`${source}: its selector matches no Deployment's pods`);
      const names = new Set<string>(
        (target?.object.spec.template.spec.containers ?? []).flatMap((c: Record<string, any>) =>
          (c.ports ?? []).map((p: { name?: string }) => p.name),
        ),
      );
      for (const p of object.spec?.ports ?? []) {
        if (typeof p.targetPort === 'string' && !names.has(p.targetPort))
          problems.push(`${source}: target port ${p.targetPort} is no pod's port`);
      }
    }
  }
  return problems;
}

const CONTAINERFILE = path.join(REPO, 'deploy/container/Containerfile');

/** The instructions of a Containerfile that the manifests must agree with (one a line, as ours). */
function readContainerfile(text: string): { workdir?: string; expose: string[]; cmd?: unknown; entrypoint?: string } {
  const out: { workdir?: string; expose: string[]; cmd?: unknown; entrypoint?: string } = { expose: [] };
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    const [, instruction, argument] = [m[0], m[1]!.toUpperCase(), m[2]!];
    if (instruction === 'WORKDIR') out.workdir = argument;
    if (instruction === 'EXPOSE') out.expose.push(...argument.split(/\s+/).map((p) => p.replace(/\/tcp$/, '')));
    if (instruction === 'ENTRYPOINT') out.entrypoint = argument;
    if (instruction === 'CMD') {
      try {
        out.cmd = JSON.parse(argument);
      } catch {
        out.cmd = argument; // the shell form: runs under /bin/sh -c, which no manifest repeats
      }
    }
  }
  return out;
}

/**
 * The image (deploy/container/Containerfile) and the Deployments that run it cannot drift: each
 * container starts what the image's CMD starts (its command and args replace the image's
 * ENTRYPOINT and CMD, so together they must equal CMD, and the image has no ENTRYPOINT), in its
 * WORKDIR, on the port it EXPOSEs, which is also the ALGOHOST_PORT the settings give.
 */
function imageProblems(manifests: Manifest[], containerfile: string): string[] {
  const problems: string[] = [];
  const image = readContainerfile(containerfile);
  if (image.entrypoint !== undefined)
    problems.push(`Containerfile: an ENTRYPOINT (${image.entrypoint}), which the manifests' command replaces`);
  if (!Array.isArray(image.cmd) || !image.cmd.every((a) => typeof a === 'string')) {
    problems.push(`Containerfile: CMD is not an exec form (a JSON array of strings): ${JSON.stringify(image.cmd)}`);
  }
  if (image.expose.length !== 1) problems.push(`Containerfile: EXPOSEs ${image.expose.length} ports, not the one HTTP port`);
  const byName = new Map(manifests.map((m) => [`${m.object.kind}/${m.object.metadata?.name}`, m]));
  for (const { source, object } of manifests) {
    if (object.kind !== 'Deployment') continue;
    for (const c of object.spec?.template?.spec?.containers ?? []) {
      const started = [...(c.command ?? image.cmd ?? []), ...(c.args ?? [])];
      if (JSON.stringify(started) !== JSON.stringify(image.cmd)) {
        problems.push(`${source}: ${c.name} starts ${JSON.stringify(started)}, the image's CMD is ${JSON.stringify(image.cmd)}`);
      }
      if (c.workingDir !== undefined && c.workingDir !== image.workdir) {
        problems.push(`${source}: ${c.name}'s workingDir ${c.workingDir} is not the image's WORKDIR ${image.workdir}`);
      }
      for (const p of c.ports ?? []) {
        if (!image.expose.includes(String(p.containerPort))) {
          problems.push(`${source}: ${c.name}'s containerPort ${p.containerPort} is not EXPOSEd by the image (${image.expose.join(', ')})`);
        }
      }
      const port = containerEnv(c, byName).ALGOHOST_PORT;
      if (port !== undefined && !image.expose.includes(port)) {
        problems.push(`${source}: ${c.name} listens on ALGOHOST_PORT ${port}, the image EXPOSEs ${image.expose.join(', ')}`);
      }
    }
  }
  return problems;
}

async function allProblems(manifests: Manifest[]): Promise<string[]> {
  return [
    ...(await schemaProblems(manifests)),
    ...fieldProblems(manifests),
    ...crossProblems(manifests),
    ...imageProblems(manifests, fs.readFileSync(CONTAINERFILE, 'utf8')),
  ];
}

/** Addresses a worker pod must never reach: metadata services, loopback, private and cluster ranges, in several spellings. */
const FORBIDDEN_FROM_WORKERS = [
  '169.254.169.254',
  'fd00:ec2::254',
  '::ffff:169.254.169.254',
  '127.0.0.1',
  '::1',
  '10.96.0.1',
  '10.244.1.7',
  '172.20.0.10',
  '192.168.1.1',
  '100.64.0.1',
  'fe80::1',
  'fd12:3456::1',
  '64:ff9b::a9fe:a9fe',
];
/** Public addresses a full-network runner must still reach (through the node's egress proxy). */
const PUBLIC_ADDRESSES = ['151.101.0.223', '8.8.8.8', '2a04:4e42::223'];

/** Whether an ipBlock peer lets `address` through. */
function ipBlockAllows(block: { cidr: string; except?: string[] }, address: string): boolean {
  const type = (cidr: string) => (cidr.includes(':') ? 'ipv6' : 'ipv4');
  const subnet = (cidr: string) => {
    const [base, bits] = cidr.split('/');
    const list = new net.BlockList();
    list.addSubnet(base!, Number(bits), type(cidr));
    return list;
  };
  const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
  if (!subnet(block.cidr).check(address, family)) return false;
  return !(block.except ?? []).some((e) => subnet(e).check(address, family));
}

/** The port of a service URL and the namespace of its `<service>.<namespace>.svc…` host. */
function servicePlace(url: string): { namespace?: string; port: number } {
  const u = new URL(url);
  const defaults: Record<string, number> = { 'nats:': 4222, 'postgres:': 5432, 'postgresql:': 5432, 'http:': 80, 'https:': 443 };
  const m = /^[^.]+\.([^.]+)\.svc(?:\.|$)/.exec(u.hostname);
  return { ...(m ? { namespace: m[1] } : {}), port: u.port ? Number(u.port) : (defaults[u.protocol] ?? 0) };
}

/** The worker pods' egress: limited by a policy, open to the internet only, and to the node's services by namespace and port. */
function workerEgressProblems(manifests: Manifest[]): string[] {
  const problems: string[] = [];
  const worker = manifests.find((m) => m.object.kind === 'Deployment' && m.object.metadata.name === 'algohost-worker')?.object;
  if (!worker) return ['no worker Deployment'];
  const labels: Record<string, string> = worker.spec.template.metadata.labels ?? {};
  const selects = (selector: Record<string, any> | undefined) =>
    Object.entries((selector?.matchLabels ?? {}) as Record<string, string>).every(([k, v]) => labels[k] === v) &&
    (selector?.matchExpressions ?? []).length === 0;
  const policies = manifests.filter(
    (m) => m.object.kind === 'NetworkPolicy' && selects(m.object.spec.podSelector) && (m.object.spec.policyTypes ?? []).includes('Egress'),
  );
  if (policies.length === 0) return ["no NetworkPolicy limits the worker pods' egress"];
  const ipBlocks: { cidr: string; except?: string[] }[] = [];
  /** namespace → ports a rule opens there. */
  const namespacePorts = new Map<string, Set<number>>();
  for (const { source, object } of policies) {
    for (const [i, rule] of ((object.spec.egress ?? []) as Record<string, any>[]).entries()) {
      const peers = (rule.to ?? []) as Record<string, any>[];
      if (peers.length === 0) problems.push(`${source}: egress rule ${i} allows every destination`);
      const ports = ((rule.ports ?? []) as { port?: number }[]).map((p) => p.port).filter((p): p is number => typeof p === 'number');
      for (const peer of peers) {
        if (peer.ipBlock) {
          ipBlocks.push(peer.ipBlock);
          continue;
        }
        const namespace = peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] as string | undefined;
        if (!namespace) problems.push(`${source}: egress rule ${i} reaches pods of any namespace`);
        if (ports.length === 0) problems.push(`${source}: egress rule ${i} opens every port of namespace ${namespace ?? '(any)'}`);
        const open = namespacePorts.get(namespace ?? '*') ?? new Set<number>();
        for (const p of ports) open.add(p);
        namespacePorts.set(namespace ?? '*', open);
      }
    }
  }
  for (const address of FORBIDDEN_FROM_WORKERS) {
    if (ipBlocks.some((b) => ipBlockAllows(b, address))) problems.push(`worker pods reach ${address}`);
  }
  for (const address of PUBLIC_ADDRESSES) {
    if (!ipBlocks.some((b) => ipBlockAllows(b, address))) problems.push(`worker pods do not reach the public address ${address}`);
  }
  // The node's own services, as the settings name them, by their namespace and port.
  const settings =
    manifests.find((m) => m.object.kind === 'ConfigMap' && m.object.metadata.name === 'algohost-settings')?.object.data ?? {};
  const secrets =
    manifests.find((m) => m.object.kind === 'Secret' && m.object.metadata.name === 'algohost-secrets')?.object.stringData ?? {};
  const services: Record<string, string | undefined> = {
    ALGOHOST_NATS_URL: settings.ALGOHOST_NATS_URL,
    ALGOHOST_S3_ENDPOINT: settings.ALGOHOST_S3_ENDPOINT,
    ALGOHOST_DATABASE_URL: secrets.ALGOHOST_DATABASE_URL,
  };
  for (const [name, url] of Object.entries(services)) {
    if (!url) continue;
    const place = servicePlace(url);
    if (!place.namespace) continue;
    if (!namespacePorts.get(place.namespace)?.has(place.port)) {
      problems.push(`worker pods cannot reach ${name} (${place.namespace}, port ${place.port})`);
    }
  }
  return problems;
}

/** A deep copy of the manifests with one object changed. */
function broken(manifests: Manifest[], source: string, change: (o: Record<string, any>) => void): Manifest[] {
  const copy = structuredClone(manifests);
  const target = copy.find((m) => m.source === source);
  assert.ok(target, `no manifest ${source}`);
  change(target.object);
  return copy;
}

describe('Kubernetes manifests (deploy/kubernetes/)', () => {
  const manifests = readManifests();

  test('hold the API Deployment and Service, the worker Deployment, the settings and the Git volume', () => {
    const kinds = manifests.map((m) => `${m.object.kind}/${m.object.metadata.name}`).sort();
    for (const k of [
      'ConfigMap/algohost-settings',
      'Deployment/algohost-api',
      'Deployment/algohost-worker',
      'PersistentVolumeClaim/algohost-git',
      'Secret/algohost-secrets',
      'Service/algohost-api',
    ]) {
      assert.ok(kinds.includes(k), `${k} is missing (have ${kinds.join(', ')})`);
    }
    const claim = manifests.find((m) => m.object.kind === 'PersistentVolumeClaim')!.object;
    assert.deepEqual(claim.spec.accessModes, ['ReadWriteMany'], 'every node mounts the Git volume read-write');
    const roles = manifests
      .filter((m) => Deployment.is(m.object))
      .map((m) => m.object.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'ALGOHOST_ROLE')?.value)
      .sort();
    assert.deepEqual(roles, ['api', 'worker']);
  });

  test("each role logs in to NATS as its own user, and a worker never holds the API nodes' password", () => {
    const byName = new Map(manifests.map((m) => [`${m.object.kind}/${m.object.metadata?.name}`, m]));
    const nats = byName.get('Secret/algohost-nats')!.object;
    const passwords = { ...nats.data, ...nats.stringData } as Record<string, string>;
    for (const role of ['api', 'worker']) {
      const deployment = byName.get(`Deployment/algohost-${role}`)!.object;
      const container = deployment.spec.template.spec.containers[0];
      const env = containerEnv(container, byName);
      assert.equal(env.ALGOHOST_NATS_USER, role);
      const ref = container.env.find((e: { name: string }) => e.name === 'ALGOHOST_NATS_PASSWORD')?.valueFrom?.secretKeyRef;
      assert.deepEqual(ref, { name: 'algohost-nats', key: `${role}-password` }, `${role}: the password of its own role, by key`);
      // Nothing the container loads whole (envFrom) holds a NATS password.
      for (const from of container.envFrom ?? []) assert.notEqual(from.secretRef?.name, 'algohost-nats');
      assert.equal(loadConfig(withPlaceholdersFilled(env), []).natsAllowAnonymous, false);
    }
    assert.deepEqual(Object.keys(passwords).sort(), ['api-password', 'worker-password']);
    const missingKey = crossProblems(
      broken(manifests, byName.get('Deployment/algohost-worker')!.source, (o) => {
        o.spec.template.spec.containers[0].env.find(
          (e: { name: string }) => e.name === 'ALGOHOST_NATS_PASSWORD',
        ).valueFrom.secretKeyRef.key = 'admin';
      }),
    );
    assert.match(missingKey.join('\n'), /no key admin in the Secret algohost-nats/);
  });

  test('the Deployments run the image of deploy/container/Containerfile as it is built: its CMD, WORKDIR and port', () => {
    const containerfile = fs.readFileSync(CONTAINERFILE, 'utf8');
    assert.deepEqual(imageProblems(manifests, containerfile), []);
    for (const m of manifests.filter((m) => m.object.kind === 'Deployment')) {
      assert.equal(m.object.spec.template.spec.containers[0].image, 'registry.example.com/algohost:0.1.0', m.source);
    }
    const api = manifests.find((m) => m.object.kind === 'Deployment' && m.object.metadata.name === 'algohost-api')!.source;
    const settings = manifests.find((m) => m.object.kind === 'ConfigMap')!.source;
    const otherEntry = broken(manifests, api, (o) => {
      o.spec.template.spec.containers[0].command = ['node', 'packages/server/dist/main/start.js'];
    });
    assert.match(imageProblems(otherEntry, containerfile).join('\n'), /api starts \["node","packages.*the image's CMD is/);
    const withArgs = broken(manifests, api, (o) => {
      o.spec.template.spec.containers[0].args = ['--role', 'api'];
    });
    assert.match(imageProblems(withArgs, containerfile).join('\n'), /api starts .*"--role","api"\]/);
    const otherPort = broken(manifests, settings, (o) => {
      o.data.ALGOHOST_PORT = '9090';
    });
    assert.match(imageProblems(otherPort, containerfile).join('\n'), /listens on ALGOHOST_PORT 9090, the image EXPOSEs 8080/);
    const movedImage = containerfile.replace(/^EXPOSE 8080$/m, 'EXPOSE 8081').replace(/^WORKDIR .*$/m, 'WORKDIR /srv/algohost');
    const moved = imageProblems(manifests, movedImage).join('\n');
    assert.match(moved, /containerPort 8080 is not EXPOSEd by the image \(8081\)/);
    assert.match(moved, /workingDir \/opt\/algohost is not the image's WORKDIR \/srv\/algohost/);
    const shellForm = containerfile.replace(/^CMD .*$/m, 'CMD node packages/server/dist/main/start.js');
    assert.match(imageProblems(manifests, shellForm).join('\n'), /CMD is not an exec form/);
    const entrypoint = `${containerfile}\nENTRYPOINT ["tini", "--"]\n`;
    assert.match(imageProblems(manifests, entrypoint).join('\n'), /an ENTRYPOINT/);
  });

  test("the worker pods' egress: DNS, the node's services by namespace and port, the internet; no cluster service, private range or metadata address", () => {
    assert.deepEqual(workerEgressProblems(manifests), []);
    const egress = manifests.find((m) => m.object.kind === 'NetworkPolicy' && m.object.metadata.name === 'algohost-worker-egress')!.source;
    const settings = manifests.find((m) => m.object.kind === 'ConfigMap')!.source;
    const noPolicy = manifests.filter((m) => m.source !== egress);
    assert.deepEqual(workerEgressProblems(noPolicy), ["no NetworkPolicy limits the worker pods' egress"]);
    const metadataOpen = broken(manifests, egress, (o) => {
      o.spec.egress.find((r: Record<string, any>) => r.to?.[0]?.ipBlock).to[0].ipBlock.except = ['10.0.0.0/8'];
    });
    const open = workerEgressProblems(metadataOpen).join('\n');
    assert.match(open, /worker pods reach 169\.254\.169\.254/);
    assert.match(open, /worker pods reach 172\.20\.0\.10/);
    const anyDestination = broken(manifests, egress, (o) => {
      o.spec.egress.push({ ports: [{ protocol: 'TCP', port: 443 }] });
    });
    assert.match(workerEgressProblems(anyDestination).join('\n'), /allows every destination/);
    const wholeNamespace = broken(manifests, egress, (o) => {
      o.spec.egress.push({ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'default' } } }] });
    });
    assert.match(workerEgressProblems(wholeNamespace).join('\n'), /opens every port of namespace default/);
    const movedNats = broken(manifests, settings, (o) => {
      o.data.ALGOHOST_NATS_URL = 'nats://nats.queue.svc.cluster.local:4222';
    });
    assert.match(workerEgressProblems(movedNats).join('\n'), /cannot reach ALGOHOST_NATS_URL \(queue, port 4222\)/);
  });

  test('every object fits its schema, names only known fields and settings, and refers to what exists', async () => {
    assert.deepEqual(await allProblems(manifests), []);
  });

  test('a broken manifest fails: a wrong type, a misspelt field, an unknown setting, a missing reference', async () => {
    const api = manifests.find((m) => m.object.kind === 'Deployment' && m.object.metadata.name === 'algohost-api')!.source;
    const settings = manifests.find((m) => m.object.kind === 'ConfigMap')!.source;
    const wrongType = await schemaProblems(
      broken(manifests, api, (o) => {
        o.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
      }),
    );
    assert.match(wrongType.join('\n'), /containerPort must be integer/);
    const noName = await schemaProblems(
      broken(manifests, api, (o) => {
        delete o.spec.template.spec.containers[0].name;
      }),
    );
    assert.match(noName.join('\n'), /containers\/0 must have required property '?name'?/);
    const misspelt = fieldProblems(
      broken(manifests, api, (o) => {
        const c = o.spec.template.spec.containers[0];
        c.readinessprobe = c.readinessProbe;
      }),
    );
    assert.match(misspelt.join('\n'), new RegExp(`${api}: .*readinessprobe.* does not exist in type 'IContainer'`));
    const unknownSetting = crossProblems(
      broken(manifests, settings, (o) => {
        o.data.ALGOHOST_NATS_ADDRESS = o.data.ALGOHOST_NATS_URL;
      }),
    );
    assert.match(unknownSetting.join('\n'), /ALGOHOST_NATS_ADDRESS is not an algohost setting/);
    const badValue = crossProblems(
      broken(manifests, settings, (o) => {
        delete o.data.ALGOHOST_NATS_URL;
      }),
    );
    assert.match(badValue.join('\n'), /ALGOHOST_ROLE=api needs ALGOHOST_NATS_URL/);
    const missingClaim = crossProblems(manifests.filter((m) => m.object.kind !== 'PersistentVolumeClaim'));
    assert.match(missingClaim.join('\n'), /no PersistentVolumeClaim algohost-git/);
    const wrongProbe = crossProblems(
      broken(manifests, api, (o) => {
        o.spec.template.spec.containers[0].livenessProbe.httpGet.path = '/';
      }),
    );
    assert.match(wrongProbe.join('\n'), /livenessProbe does not ask \/healthz/);
  });
});
