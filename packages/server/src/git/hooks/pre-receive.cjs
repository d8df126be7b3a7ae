// pre-receive hook run by `git receive-pack` inside algohost, after the pushed objects have
// arrived (in quarantine, GIT_QUARANTINE_PATH) and before any ref moves. It asks the service
// that spawned it (ALGOHOST_PRE_RECEIVE_URL, authenticated with a per-process token) whether
// the push may land, prints the service's answer (the pusher sees it as "remote:" lines) and
// exits non-zero when refused, so git deletes the quarantine and updates no ref. It never
// decides anything itself; when the service cannot be asked, the push is refused.
'use strict';
const http = require('node:http');
const path = require('node:path');

process.stdin.resume(); // the ref updates: not needed here, read so git never blocks writing them
process.stdin.on('end', () => {
  const quarantine = process.env.GIT_QUARANTINE_PATH;
  const body = JSON.stringify({
    push_id: process.env.ALGOHOST_PUSH_ID,
    // git may give it relative to the repository, where hooks of a bare repository run.
    quarantine_path: quarantine ? path.resolve(quarantine) : undefined,
  });
  const refuse = (message) => {
    process.stdout.write(`${message}\n`);
    process.exit(1);
  };
  if (!process.env.ALGOHOST_PRE_RECEIVE_URL) refuse('algohost: push refused: this push did not come through the service');
  const req = http.request(
    process.env.ALGOHOST_PRE_RECEIVE_URL,
    { method: 'POST', headers: { 'content-type': 'application/json', 'x-algohost-hook-token': process.env.ALGOHOST_HOOK_TOKEN } },
    (res) => {
      res.pipe(process.stdout);
      res.on('end', () => process.exit(res.statusCode === 200 ? 0 : 1));
    },
  );
  req.on('error', (err) => refuse(`algohost: push refused: its size could not be checked (${err.message}); try again`));
  req.end(body);
});
