/** `algo search [text]`: Explore, the public algorithms of every owner whose owner, name, label or summary holds the text. */
import type { Command } from 'commander';
import type { Algorithm } from '@algohost/client';
import { notice, printJson, printTable } from '../lib/output.js';
import { contextOf, needsFeature, optionsOf, positiveInt, withJson, withProfile } from './common.js';

interface SearchOptions {
  limit: number;
  json?: boolean;
}

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('search')
        .argument('[text]', 'found in the owner, name, label or summary, ignoring case (none: every public algorithm)')
        .description('find public algorithms of every owner, newest first')
        .option('--limit <n>', 'how many to show at most', positiveInt, 50),
    ),
  ).action(async (text: string | undefined, _o, cmd: Command) => {
    const opts = optionsOf<SearchOptions>(cmd);
    const client = contextOf(cmd).client();
    const found: Algorithm[] = [];
    let more = false;
    await needsFeature('searching algorithms', async () => {
      for await (const a of client.searchAllAlgorithms({ query: text, limit: Math.min(opts.limit + 1, 1000) })) {
        if (found.length === opts.limit) {
          more = true;
          break;
        }
        found.push(a);
      }
    });
    if (opts.json) return printJson(found);
    if (found.length === 0) return notice(text ? `No public algorithm matches "${text}".` : 'No public algorithms yet.');
    printTable(
      ['ALGORITHM', 'LABEL', 'CREATED', 'SUMMARY'],
      found.map((a) => [`${a.owner}/${a.name}`, a.details.label ?? '', a.created_at, oneLine(a.details.summary ?? '')]),
    );
    if (more) notice(`More match: raise --limit (${opts.limit}) to see them.`);
  });
}

/** A summary in a table cell: one line, not too long. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
