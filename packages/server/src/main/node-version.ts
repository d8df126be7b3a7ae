/**
 * The Node.js a node refuses to start on. package.json's `engines` says Node 24, and `npm start`
 * puts Node 24 first on PATH (scripts/lib/node.sh), but an operator who starts the built server
 * with whatever `node` a machine has (docs/cluster.md, a unit file) would otherwise run on an
 * older one without a word: Node 20 no longer gets security fixes.
 */
import { ConfigError } from '../config/config.js';

const OLDEST_MAJOR = 24;

export function refuseOldNode(version: string = process.versions.node, execPath: string = process.execPath): void {
  const major = Number(version.split('.')[0]);
  if (major >= OLDEST_MAJOR) return;
  throw new ConfigError(
    `algohost needs Node.js ${OLDEST_MAJOR} or newer; ${execPath} is Node.js ${version}. ` +
      '`npm run setup` installs Node.js 24 where it is missing, and `source scripts/lib/node.sh && use_node` puts it first on PATH',
  );
}
