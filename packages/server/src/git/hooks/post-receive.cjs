// post-receive hook run by `git receive-pack` inside algohost. It hands the ref updates and
// push options back to the service that spawned it (ALGOHOST_HOOK_URL, authenticated with a
// per-process token) and copies the service's answer to stdout, which git shows the pusher
// as "remote:" lines. It never decides anything itself.
'use strict';
const http = require('node:http');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const count = Number(process.env.GIT_PUSH_OPTION_COUNT || 0);
  const pushOptions = [];
  for (let i = 0; i < count; i++) pushOptions.push(process.env[`GIT_PUSH_OPTION_${i}`] || '');
  const updates = input
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [oldSha, newSha, ref] = line.split(' ');
      return { old: oldSha, new: newSha, ref };
    });
  const body = JSON.stringify({
    algorithm_id: process.env.ALGOHOST_ALGORITHM_ID,
    pusher: process.env.ALGOHOST_PUSHER,
    updates,
    push_options: pushOptions,
  });
  const req = http.request(
    process.env.ALGOHOST_HOOK_URL,
    { method: 'POST', headers: { 'content-type': 'application/json', 'x-algohost-hook-token': process.env.ALGOHOST_HOOK_TOKEN } },
    (res) => {
      res.pipe(process.stdout);
      res.on('end', () => process.exit(0));
    },
  );
  req.on('error', (err) => {
    process.stdout.write(`algohost: could not start a build for this push (${err.message}); run POST .../compile to build it\n`);
    process.exit(0);
  });
  req.end(body);
});
