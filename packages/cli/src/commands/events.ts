/**
 * `algo flows`, `algo flow`, `algo deliveries`, `algo listeners`, `algo sqs-trust` (an
 * algorithm's Event Flows, its owner's view) and `algo event-clusters`, `algo topics`, `algo assign` (cluster admins):
 * docs/compatibility.md §10.
 */
import type { Command } from 'commander';
import type { EventFlow } from '@algohost/client';
import { line, printJson, printTable } from '../lib/output.js';
import { contextOf, oneOf, optionsOf, ownerAndName, positiveInt, withJson, withProfile } from './common.js';

const flowSource = (f: EventFlow) =>
  f.source_type === 'kafka' ? `kafka ${f.cluster?.name ?? ''}/${f.topic ?? ''}` : `${f.source_type} ${f.source_uri ?? ''}`;

export function register(program: Command): void {
  withJson(
    withProfile(program.command('flows').argument('<algorithm>', 'owner/name').description('list the Event Flows of an algorithm')),
  ).action(async (algorithm: string, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(algorithm, undefined);
    const flows = await contextOf(cmd).client().events.flows(owner, name);
    if (optionsOf(cmd).json) return printJson(flows);
    printTable(
      ['ID', 'ROLE', 'SOURCE', 'ENABLED', 'VERSION', 'STATE', 'LAG', 'EXTERNAL ID'],
      flows.map((f) => [
        f.id,
        f.role,
        flowSource(f),
        f.enabled ? 'yes' : 'no',
        f.version ?? '',
        f.status?.state ?? '',
        f.status?.lag ?? '',
        // SQS roles: what the role's trust policy must require (algo sqs-trust prints the policy).
        f.credentials?.external_id ?? '',
      ]),
    );
  });

  withJson(
    withProfile(
      program
        .command('sqs-trust')
        .argument('<account>', 'user or organization that owns the algorithms')
        .description('the ExternalId an account’s SQS flows send when they assume a role, and the trust policy to give the role'),
    ),
  ).action(async (account: string, _o, cmd: Command) => {
    const settings = await contextOf(cmd).client().events.sqsAssumeRole(account);
    if (optionsOf(cmd).json) return printJson(settings);
    line(`ExternalId:     ${settings.external_id}`);
    line(`SourceIdentity: ${settings.source_identity}`);
    line('Trust policy for the role (the nodes’ principal from your operator):');
    line(JSON.stringify(settings.trust_policy, null, 2));
  });

  withJson(
    withProfile(
      program
        .command('flow')
        .argument('<algorithm>', 'owner/name')
        .argument('<flow-id>', 'the flow (algo flows lists them)')
        .description('enable or disable an Event Flow, pick its version or timeout')
        .option('--enable', 'enable it (with the latest published version unless --version)')
        .option('--disable', 'disable it')
        .option('--version <version>', 'the published version it runs')
        .option('--timeout <seconds>', 'seconds per delivery', positiveInt),
    ),
  ).action(async (algorithm: string, flowId: string, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(algorithm, undefined);
    const opts = optionsOf<{ enable?: boolean; disable?: boolean; version?: string; timeout?: number; json?: boolean }>(cmd);
    const changes: { enabled?: boolean; version?: string; timeout?: number } = {};
    if (opts.enable) changes.enabled = true;
    if (opts.disable) changes.enabled = false;
    if (opts.version) changes.version = opts.version;
    if (opts.timeout) changes.timeout = opts.timeout;
    const flow = await contextOf(cmd).client().events.updateFlow(owner, name, flowId, changes);
    if (opts.json) return printJson(flow);
    line(`${flow.id}: ${flow.enabled ? `enabled, version ${flow.version}` : 'disabled'} (${flowSource(flow)})`);
  });

  withJson(
    withProfile(
      program
        .command('deliveries')
        .argument('<algorithm>', 'owner/name')
        .description('the latest deliveries of an algorithm’s Event Flows')
        .option('--flow <id>', 'only this flow’s')
        .option('--limit <n>', 'how many', positiveInt, 50),
    ),
  ).action(async (algorithm: string, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(algorithm, undefined);
    const opts = optionsOf<{ flow?: string; limit: number; json?: boolean }>(cmd);
    const page = await contextOf(cmd).client().events.deliveries(owner, name, { flow: opts.flow, limit: opts.limit });
    if (opts.json) return printJson(page.results);
    printTable(
      ['WHEN', 'SOURCE', 'OUTCOME', 'ATTEMPTS', 'MS', 'ERROR'],
      page.results.map((d) => [d.created_at, d.source, d.outcome, d.attempts, Math.round(d.latency_ms), (d.error ?? '').split('\n')[0]]),
    );
  });

  withJson(
    withProfile(
      program.command('listeners').argument('<account>', 'user or organization').description('the event listeners of an account'),
    ),
  ).action(async (account: string, _o, cmd: Command) => {
    const listeners = await contextOf(cmd).client().events.listeners(account);
    if (optionsOf(cmd).json) return printJson(listeners);
    printTable(
      ['ID', 'TYPE', 'SOURCE', 'ALGORITHM', 'CREDENTIALS'],
      listeners.map((l) => [l.id, l.sourceType, l.sourceURI, `${l.algoOwner}/${l.algoName}`, l.credentials]),
    );
  });

  withJson(withProfile(program.command('event-clusters').description('the connected Kafka clusters (admin)'))).action(
    async (_o, cmd: Command) => {
      const clusters = await contextOf(cmd).client().events.clusters();
      if (optionsOf(cmd).json) return printJson(clusters);
      printTable(
        ['NAME', 'BOOTSTRAP SERVERS', 'TLS', 'SASL'],
        clusters.map((c) => [
          c.name,
          c.bootstrap_servers.join(','),
          c.tls ? 'yes' : 'no',
          c.sasl ? `${c.sasl.mechanism} ${c.sasl.username}` : '',
        ]),
      );
    },
  );

  withJson(
    withProfile(
      program.command('topics').argument('<cluster>', 'name or id').description('the topics of a connected Kafka cluster (admin)'),
    ),
  ).action(async (cluster: string, _o, cmd: Command) => {
    const topics = await contextOf(cmd).client().events.topics(cluster);
    if (optionsOf(cmd).json) return printJson(topics);
    printTable(
      ['TOPIC', 'PARTITIONS'],
      topics.map((t) => [t.name, t.partitions]),
    );
  });

  withJson(
    withProfile(
      program
        .command('assign')
        .argument('<cluster>', 'name or id')
        .argument('<algorithm>', 'owner/name (published)')
        .argument('<topic>')
        .requiredOption('--role <role>', 'publisher or subscriber', oneOf('publisher', 'subscriber'))
        .description('assign a published algorithm to a topic (admin)'),
    ),
  ).action(async (cluster: string, algorithm: string, topic: string, _o, cmd: Command) => {
    const opts = optionsOf<{ role: 'publisher' | 'subscriber'; json?: boolean }>(cmd);
    const flow = await contextOf(cmd).client().events.assign(cluster, { algorithm, topic, role: opts.role });
    if (opts.json) return printJson(flow);
    line(`${flow.id}: ${algorithm} ${opts.role} of ${topic}; its owner enables it: algo flow ${algorithm} ${flow.id} --enable`);
  });
}
