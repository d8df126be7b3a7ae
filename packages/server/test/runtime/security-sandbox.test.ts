/**
 * Issue 11, items 2, 3, 6, 8, 13 (artifacts) and 16, each played as the attacker (mallory)
 * would: through pushes of her own algorithms and calls of them, while alice uses hers.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { environmentId } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { git, gitUrl } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const RUNNER_MEMORY_MIB = 256;
/** Each runner tmpfs is a quarter of the runner's memory. */
const SCRATCH_BYTES = (RUNNER_MEMORY_MIB * 1024 * 1024) / 4;
const OPEN_FILES = 200;
const MAX_ARTIFACT_BYTES = 3 * 1024 * 1024;

/** Runs `input.code` with the module's globals (so it sees SEEN); otherwise remembers and echoes the input. */
const PROBE = `import os

SEEN = []


def apply(input):
    if isinstance(input, dict) and "code" in input:
        scope = dict(globals())
        scope["input"] = input
        exec(input["code"], scope)
        return scope.get("result")
    SEEN.append(input)
    return {"echo": input, "calls": len(SEEN)}
`;

const probeTree = (): Record<string, string> => ({
  'algorithmia.conf': JSON.stringify({ username: 'user', algoname: 'Probe', language: 'python3' }),
  'requirements.txt': '# none\n',
  'src/__init__.py': '',
  'src/Probe.py': PROBE,
});

/** Python run inside a runner: reads a file, or the error it got. */
const READ = `
def rd(p):
    try:
        with open(p, "rb") as f:
            return f.read().decode("latin-1")
    except Exception as e:
        return "ERR " + type(e).__name__ + ": " + str(e)
`;

type Entry = string | Buffer | { symlink: string };

interface Pushed {
  status: string;
  error: string | null;
  sha: string;
  log: string;
}

for (const database of DATABASES) {
  describe(`sandbox, artifacts and runners hold against a hostile tenant (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let pythonEnv: string;
    let work: string;
    let commitCount = 0;

    before(async () => {
      srv = await startTestServer({
        database,
        env: {
          ALGOHOST_RUNNER_MEMORY: String(RUNNER_MEMORY_MIB),
          ALGOHOST_SANDBOX_OPEN_FILES: String(OPEN_FILES),
          ALGOHOST_MAX_ARTIFACT_BYTES: String(MAX_ARTIFACT_BYTES),
        },
      });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      pythonEnv = await environmentId(api, alice.key, 'python311');
      work = await makeTempDir('algohost-sec-sandbox-');
    });
    after(async () => {
      await srv.stop();
      await fs.promises.rm(work, { recursive: true, force: true });
    });

    const create = async (user: TestUser, name: string) => {
      const res = await api.post(`/v1/algorithms/${user.name}`, {
        key: user.key,
        body: { name, settings: { algorithm_environment: pythonEnv } },
      });
      assert.equal(res.status, 200, res.text);
    };

    /**
     * Makes one commit of exactly `files` (an orphan: the same files and dates make the same
     * commit anywhere) and force-pushes it to each of `targets`, waiting for the builds.
     */
    const pushTree = async (files: Record<string, Entry>, targets: { user: TestUser; name: string }[]): Promise<Pushed[]> => {
      const dir = path.join(work, `c${++commitCount}`);
      fs.mkdirSync(dir);
      assert.equal((await git(['init', '-q', '-b', 'main', dir])).code, 0);
      for (const [file, content] of Object.entries(files)) {
        const p = path.join(dir, file);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        if (typeof content === 'string' || Buffer.isBuffer(content)) fs.writeFileSync(p, content);
        else fs.symlinkSync(content.symlink, p);
      }
      const when = { GIT_AUTHOR_DATE: '2024-01-02T03:04:05Z', GIT_COMMITTER_DATE: '2024-01-02T03:04:05Z' };
      await git(['add', '-A'], dir);
      assert.equal((await git(['commit', '-q', '-m', `tree ${commitCount}`], dir, when)).code, 0);
      const sha = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
      const results: Pushed[] = [];
      for (const t of targets) {
        const url = gitUrl(srv.url, t.user.name, t.user.key, t.user.name, t.name);
        const push = await git(['push', '-q', '--force', '-o', 'wait', url, 'HEAD:main'], dir);
        const id = /build ([0-9a-f-]{36}) queued/.exec(push.stderr)?.[1];
        assert.ok(id, push.stderr);
        const build = await api.get(`/v1/algorithms/${t.user.name}/${t.name}/builds/${id}`, { key: t.user.key });
        const logs = await api.get(`/v1/algorithms/${t.user.name}/${t.name}/builds/${id}/logs`, { key: t.user.key });
        results.push({ status: build.body.status, error: build.body.error ?? null, sha, log: String(logs.body.logs ?? '') });
        assert.ok(['succeeded', 'failed'].includes(build.body.status), build.text);
      }
      return results;
    };

    const call = (user: TestUser, name: string, sha: string, input: unknown) =>
      request(srv.url, 'POST', `/v1/algo/${user.name}/${name}/${sha}`, { key: user.key, body: input });
    /** Runs Python in the runner of user/name@sha; returns its `result`. */
    const probe = async (user: TestUser, name: string, sha: string, code: string) => {
      const res = await call(user, name, sha, { code });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.error, undefined, res.text);
      return res.body.result;
    };

    let aliceSha: string;
    before(async () => {
      await create(alice, 'Probe');
      await create(mallory, 'Probe');
      const [a, m] = await pushTree(probeTree(), [
        { user: alice, name: 'Probe' },
        { user: mallory, name: 'Probe' },
      ]);
      assert.equal(a!.status, 'succeeded', a!.log);
      assert.equal(m!.status, 'succeeded', m!.log);
      aliceSha = a!.sha;
    });

    test('item 2: a pushed .algohost-artifact.json linking to a root-only host file fails the build and the file is untouched', async () => {
      const secretDir = await makeTempDir('algohost-root-only-');
      fs.chmodSync(secretDir, 0o700);
      const secret = path.join(secretDir, 'precious');
      fs.writeFileSync(secret, 'root-only content\n', { mode: 0o600 });
      try {
        await create(mallory, 'Linker');
        const [linked] = await pushTree({ ...probeTree(), '.algohost-artifact.json': { symlink: secret } }, [
          { user: mallory, name: 'Linker' },
        ]);
        assert.equal(linked!.status, 'failed', linked!.log);
        assert.match(
          linked!.error ?? '',
          /\.algohost-artifact\.json in the repository is a symbolic link; algohost reads \.algohost-artifact\.json itself/,
        );
        assert.equal(fs.readFileSync(secret, 'utf8'), 'root-only content\n');
        assert.equal(fs.statSync(secret).mode & 0o777, 0o600);

        // The other names the host reads from a tree: never followed either, and said so.
        for (const name of ['algorithmia.conf', 'requirements.txt']) {
          const [r] = await pushTree({ ...probeTree(), [name]: { symlink: secret } }, [{ user: mallory, name: 'Linker' }]);
          assert.equal(r!.status, 'failed', r!.log);
          assert.match(r!.error ?? '', new RegExp(`^${name.replace('.', '\\.')} in the repository is a symbolic link`));
          assert.doesNotMatch(r!.log, /root-only content/);
        }
        assert.equal(fs.readFileSync(secret, 'utf8'), 'root-only content\n');
      } finally {
        await fs.promises.rm(secretDir, { recursive: true, force: true });
      }
      // Alice is not affected.
      const res = await call(alice, 'Probe', aliceSha, { mine: 'alice-2' });
      assert.deepEqual(res.body.result?.echo, { mine: 'alice-2' });
    });

    test('item 3: a forged .algohost-artifact.json naming layer ../../.. mounts nothing; a forged manifest is refused', async () => {
      await create(mallory, 'Forger');
      const forged = JSON.stringify({ environment: 'python311', language: 'python3', commit: 'x', layer: '../../..', builtAt: '' });
      const [r] = await pushTree({ ...probeTree(), '.algohost-artifact.json': forged }, [{ user: mallory, name: 'Forger' }]);
      assert.equal(r!.status, 'succeeded', r!.log);
      const seen = (await probe(
        mallory,
        'Forger',
        r!.sha,
        `import os\nresult = {"deps": os.path.exists("/deps"), "shadow": os.path.exists("/deps/etc/shadow"), "data": os.path.exists("/deps${srv.dataDir}"), "app": sorted(os.listdir("/app"))}`,
      )) as { deps: boolean; shadow: boolean; data: boolean; app: string[] };
      assert.deepEqual([seen.deps, seen.shadow, seen.data], [false, false, false]);
      assert.ok(seen.app.includes('.algohost-artifact.json'), 'the forged file is only data of the tree');

      // Even a manifest that is not the build's own (it lives where no build step can write) is checked.
      const services = srv.server.services;
      const row = await services.db
        .selectFrom('builds')
        .select('artifact')
        .where('commit_sha', '=', r!.sha)
        .where('status', '=', 'succeeded')
        .executeTakeFirst();
      const key = row!.artifact!;
      const manifestFile = path.join(services.builder.artifactPath(key), 'manifest.json');
      const original = fs.readFileSync(manifestFile, 'utf8');
      assert.equal(fs.statSync(manifestFile).uid, 0);
      try {
        for (const layer of ['../../..', 'python/../../../..', '/etc']) {
          fs.writeFileSync(manifestFile, JSON.stringify({ ...JSON.parse(original), layer }));
          await assert.rejects(services.builder.readArtifact(key), /names an invalid dependency layer/);
        }
      } finally {
        fs.writeFileSync(manifestFile, original);
      }
      assert.throws(() => services.builder.artifactPath('../../etc'), /is not an artifact name/);
      assert.throws(
        () => services.builder.artifactPath('python311/0123456789abcdef0123456789abcdef01234567'),
        /earlier version of algohost/,
      );
    });

    test('item 3: a runner sees no host path in /proc/1/cmdline, its environment, PWD or mountinfo, and no other runner', async () => {
      const runDir = path.join(srv.dataDir, 'builds', 'run');
      // Alice's runner is warm while mallory looks around.
      assert.deepEqual((await call(alice, 'Probe', aliceSha, { mine: 'alice-3' })).body.result?.echo, { mine: 'alice-3' });
      const seen = (await probe(
        mallory,
        'Probe',
        aliceSha,
        `${READ}
import os
result = {
    "cmdline1": rd("/proc/1/cmdline").replace("\\0", " "),
    "environ1": rd("/proc/1/environ").replace("\\0", "\\n"),
    "cmdline": rd("/proc/self/cmdline").replace("\\0", " "),
    "environ": rd("/proc/self/environ").replace("\\0", "\\n"),
    "pwd": os.environ.get("PWD", ""),
    "cwd": os.getcwd(),
    "mountinfo": rd("/proc/self/mountinfo"),
    "scratch": sorted(os.listdir("/run/algohost")),
    "fifo": os.readlink("/run/algohost/algoout") if os.path.islink("/run/algohost/algoout") else "not a link",
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "rundir": os.path.exists(${JSON.stringify(runDir)}),
}`,
      )) as Record<string, string | string[] | number[] | boolean>;
      for (const field of ['cmdline1', 'environ1', 'cmdline', 'environ', 'pwd', 'cwd', 'mountinfo'] as const) {
        const text = String(seen[field]);
        assert.ok(!text.includes(runDir), `${field} shows the run directory: ${text}`);
        if (field !== 'mountinfo') assert.ok(!text.includes(srv.dataDir), `${field} shows the data directory: ${text}`);
      }
      assert.match(String(seen.cmdline1), /^\S*bwrap --args \d+ -- /);
      assert.equal(seen.pwd, '/app');
      // A bind mount's source shows in mountinfo as its path inside the source file system: the
      // only data-directory paths there are the read-only artifact (and layer) of this runner.
      for (const line of String(seen.mountinfo)
        .split('\n')
        .filter((l) => l.includes(srv.dataDir))) {
        assert.match(line, /\/builds\/(artifacts|layers)\/\S+ \/(app|deps) ro[, ]/, line);
      }
      // Its FIFO and scratch are its own: no host name, nothing of another runner to reach.
      assert.deepEqual(seen.scratch, ['algoout']);
      assert.equal(seen.fifo, '/proc/self/fd/3');
      assert.equal(seen.rundir, false);
      assert.ok(
        (seen.pids as number[]).every((p) => p < 20),
        `other processes are visible: ${JSON.stringify(seen.pids)}`,
      );
      // On the host no runner has a FIFO or directory by name: nothing for anyone to open.
      assert.deepEqual(fs.readdirSync(path.join(runDir, 'fifo')), []);
      assert.deepEqual(
        fs.readdirSync(runDir).filter((e) => e !== 'api' && e !== 'fifo'),
        [],
      );
      assert.deepEqual((await call(alice, 'Probe', aliceSha, { mine: 'alice-4' })).body.result?.echo, { mine: 'alice-4' });
    });

    test("item 6: two owners' algorithms built from the same commit get their own artifacts and runners", async () => {
      const services = srv.server.services;
      const rows = await services.db
        .selectFrom('builds')
        .select(['algorithm_id', 'artifact'])
        .where('commit_sha', '=', aliceSha)
        .where('status', '=', 'succeeded')
        .execute();
      const artifacts = new Set(rows.map((r) => r.artifact));
      assert.ok(rows.length >= 2 && artifacts.size === rows.length, JSON.stringify(rows));
      for (const r of rows) assert.ok(r.artifact!.startsWith(`${r.algorithm_id}/`), r.artifact!);

      const secret = { card: 'alice-4111-1111' };
      assert.deepEqual((await call(alice, 'Probe', aliceSha, secret)).body.result?.echo, secret);
      const leaked = await probe(mallory, 'Probe', aliceSha, 'result = SEEN');
      assert.ok(!JSON.stringify(leaked).includes('alice-4111'), `alice's input reached mallory: ${JSON.stringify(leaked)}`);
      const next = await call(alice, 'Probe', aliceSha, { mine: 'alice-6' });
      assert.deepEqual(next.body.result?.echo, { mine: 'alice-6' });
    });

    test('item 8: /run/algohost and /tmp of a runner are bounded tmpfs; writing past the bound fails inside', async () => {
      const seen = (await probe(
        mallory,
        'Probe',
        aliceSha,
        `import os\nout = {}\nfor d in ["/run/algohost", "/tmp"]:\n    n = 0\n    try:\n        with open(d + "/fill", "wb") as f:\n            while n < ${SCRATCH_BYTES * 2}:\n                f.write(b"x" * 1048576)\n                n += 1048576\n                f.flush()\n        out[d] = "wrote " + str(n)\n    except OSError as e:\n        out[d] = "failed after " + str(n) + ": " + e.strerror\n    os.remove(d + "/fill")\nresult = out`,
      )) as Record<string, string>;
      for (const d of ['/run/algohost', '/tmp']) {
        const m = /^failed after (\d+): No space left on device$/.exec(seen[d] ?? '');
        assert.ok(m, `${d}: ${seen[d]}`);
        assert.ok(Number(m[1]) <= SCRATCH_BYTES, `${d}: ${seen[d]}`);
      }
      assert.deepEqual((await call(alice, 'Probe', aliceSha, { mine: 'alice-8' })).body.result?.echo, { mine: 'alice-8' });
    });

    test('item 16: no user namespaces inside a runner; its open-files limit is the configured one', async () => {
      const seen = (await probe(
        mallory,
        'Probe',
        aliceSha,
        `import ctypes, os, resource, subprocess
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.unshare(0x10000000)
err = ctypes.get_errno()
cmd = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    raised = "raised"
except (ValueError, OSError) as e:
    raised = "refused"
result = {"unshare": [rc, os.strerror(err)], "cmd": [cmd.returncode, cmd.stderr.strip()], "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)), "raise": raised}`,
      )) as { unshare: [number, string]; cmd: [number, string]; nofile: number[]; raise: string };
      assert.equal(seen.unshare[0], -1, JSON.stringify(seen));
      assert.notEqual(seen.cmd[0], 0, JSON.stringify(seen));
      assert.deepEqual(seen.nofile, [OPEN_FILES, OPEN_FILES]);
      assert.equal(seen.raise, 'refused');
      assert.deepEqual((await call(alice, 'Probe', aliceSha, { mine: 'alice-16' })).body.result?.echo, { mine: 'alice-16' });
    });

    test('item 16: no user namespaces inside a build step either, and the same open-files limit', async () => {
      await create(mallory, 'Builder');
      // `python -m compileall` runs with the tree as its working directory, so a compileall.py of
      // the tree is user code running in the compile step: it reports what it could do and fails.
      const spy = `import ctypes, os, resource, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.unshare(0x10000000)
cmd = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)
print("USERNS", rc, cmd.returncode, "NOFILE", *resource.getrlimit(resource.RLIMIT_NOFILE), flush=True)
sys.exit(3)
`;
      const [r] = await pushTree({ ...probeTree(), 'compileall.py': spy }, [{ user: mallory, name: 'Builder' }]);
      assert.equal(r!.status, 'failed', r!.log);
      const m = /USERNS (-?\d+) (\d+) NOFILE (\d+) (\d+)/.exec(r!.log);
      assert.ok(m, r!.log);
      assert.equal(m[1], '-1', r!.log);
      assert.notEqual(m[2], '0', r!.log);
      assert.deepEqual([Number(m[3]), Number(m[4])], [OPEN_FILES, OPEN_FILES]);
    });

    test('item 13: a build whose artifact passes ALGOHOST_MAX_ARTIFACT_BYTES fails and names the limit', async () => {
      await create(mallory, 'Bulky');
      // Random bytes: Git cannot compress them below the limit.
      const [r] = await pushTree({ ...probeTree(), 'data.bin': crypto.randomBytes(MAX_ARTIFACT_BYTES + 1024 * 1024) }, [
        { user: mallory, name: 'Bulky' },
      ]);
      assert.equal(r!.status, 'failed', r!.log);
      assert.match(r!.error ?? '', /the artifact \(the built tree plus its dependency layer\) grew to more than 3\.0 MiB during checkout/);
      assert.match(r!.error ?? '', new RegExp(`limit ${MAX_ARTIFACT_BYTES} bytes`));
      // The same algorithm builds again once the tree fits.
      const [ok] = await pushTree(probeTree(), [{ user: mallory, name: 'Bulky' }]);
      assert.equal(ok!.status, 'succeeded', ok!.log);
      assert.deepEqual((await call(alice, 'Probe', aliceSha, { mine: 'alice-13' })).body.result?.echo, { mine: 'alice-13' });
    });
  });
}
