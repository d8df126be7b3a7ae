/** Prometheus text exposition of the node's counters (GET /metrics). */
import type { PoolStats } from '../runtime/runner/runner-pool.js';

/** One metric: HELP and TYPE lines, then its samples (`name{labels} value`). */
function metric(name: string, type: 'counter' | 'gauge', help: string, samples: [labels: string, value: number][]): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([labels, value]) => `${name}${labels} ${value}`)];
}

export function renderMetrics(pool: PoolStats): string {
  const counter = (name: string, help: string, value: number) => metric(name, 'counter', help, [['', value]]);
  const lines = [
    ...counter('algohost_calls_total', 'Algorithm calls served by runners on this node.', pool.calls),
    ...counter('algohost_warm_calls_total', 'Calls served by a runner that was already warm.', pool.warmCalls),
    ...counter('algohost_call_queue_seconds_total', 'Time calls waited for a free runner.', pool.queueSeconds),
    ...counter('algohost_call_start_seconds_total', 'Time calls waited for a runner to start (cold starts).', pool.startSeconds),
    ...counter('algohost_call_run_seconds_total', 'Time runners spent answering calls.', pool.runSeconds),
    ...counter('algohost_cold_starts_total', 'Runners started (a call that had to wait for a new runner).', pool.coldStarts),
    ...metric(
      'algohost_runner_failures_total',
      'counter',
      'Calls that failed in the runner, by error type.',
      Object.entries(pool.failures).map(([type, n]) => [`{error_type="${type}"}`, n]),
    ),
    ...metric('algohost_runners', 'gauge', 'Warm runners on this node when last counted.', [['', pool.runners]]),
  ];
  return `${lines.join('\n')}\n`;
}
