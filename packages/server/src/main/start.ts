/** `npm start`: parse settings, start the node, log one ready line, stop cleanly on SIGTERM. */
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { ConfigError, describeSettings, loadConfig } from '../config/config.js';
import { backup, BackupError, restore } from './backup.js';
import { gcFlagsFor } from './gc-tuning.js';
import { refuseOldNode } from './node-version.js';
import { startServer } from './server.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(
      `algohost: self-hosted algorithm hosting\n\nUsage: npm start -- [--flag value …]\n       npm start -- backup <dir> | restore <dir> [--flag value …]\n\n${describeSettings()}\n`,
    );
    return;
  }
  refuseOldNode();
  const command = argv[0] === 'backup' || argv[0] === 'restore' ? argv[0] : undefined;
  if (command) {
    // `algohost backup <dir>` / `algohost restore <dir>` (main/backup.ts), with the node's settings.
    const dir = argv[1];
    if (!dir || dir.startsWith('-')) throw new ConfigError(`usage: ${command} <directory> [--flag value …]`);
    const config = loadConfig(process.env, argv.slice(2));
    const say = (line: string) => process.stderr.write(`algohost ${command}: ${line}\n`);
    const manifest = await (command === 'backup' ? backup : restore)(config, path.resolve(dir), say);
    process.stdout.write(
      `${command === 'backup' ? 'Backed up' : 'Restored'} ${manifest.repositories} repositories and ${manifest.blobs} hosted files (${manifest.database}, ${manifest.created_at}) ${command === 'backup' ? 'to' : 'from'} ${path.resolve(dir)}\n`,
    );
    return;
  }
  const config = loadConfig(process.env, argv);
  // Read by V8 at each scavenge, so setting it now (before the node serves) takes effect.
  for (const flag of gcFlagsFor({ cpus: os.availableParallelism(), nodeFlags: process.execArgv.join(' ') })) v8.setFlagsFromString(flag);
  // Signals are taken before the server starts: a SIGTERM that arrives while it starts (the
  // "listening" line is logged before startServer returns) stops it cleanly once it is up,
  // instead of killing the process with the default action.
  let stopRequested: string | undefined;
  let stop = (signal: string) => {
    stopRequested ??= signal;
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const server = await startServer(config, { level: config.logLevel });
  const log = server.app.log;
  if (server.bootstrap.generatedKey) {
    // Printed once; the same key is in the file for whoever missed the log.
    process.stdout.write(
      `\nCreated account "admin" with admin API key:\n\n    ${server.bootstrap.generatedKey}\n\n(also written to ${server.bootstrap.keyFile}, mode 0600)\n\n`,
    );
  }
  log.debug({ publicUrl: config.publicUrl, dataDir: config.dataDir, database: config.databaseUrl ? 'postgresql' : 'sqlite' }, 'settings');

  let stopping = false;
  stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  if (stopRequested) stop(stopRequested);
}

main().catch((err: unknown) => {
  if (err instanceof BackupError) {
    process.stderr.write(`algohost: ${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`algohost: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`algohost: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
