/** Prometheus text exposition of the node's counters (GET /metrics). */
import type { PoolStats } from '../runtime/runner/runner-pool.js';

export function renderMetrics(pool: PoolStats): string {
  const lines = [
    '# HELP algohost_calls_total Algorithm calls served by runners on this node.',
    '# TYPE algohost_calls_total counter',
    `algohost_calls_total ${pool.calls}`,
    '# HELP algohost_warm_calls_total Calls served by a runner that was already warm.',
    '# TYPE algohost_warm_calls_total counter',
    `algohost_warm_calls_total ${pool.warmCalls}`,
    '# HELP algohost_call_queue_seconds_total Time calls waited for a free runner.',
    '# TYPE algohost_call_queue_seconds_total counter',
    `algohost_call_queue_seconds_total ${pool.queueSeconds}`,
    '# HELP algohost_call_start_seconds_total Time calls waited for a runner to start (cold starts).',
    '# TYPE algohost_call_start_seconds_total counter',
    `algohost_call_start_seconds_total ${pool.startSeconds}`,
    '# HELP algohost_call_run_seconds_total Time runners spent answering calls.',
    '# TYPE algohost_call_run_seconds_total counter',
    `algohost_call_run_seconds_total ${pool.runSeconds}`,
    '# HELP algohost_cold_starts_total Runners started (a call that had to wait for a new runner).',
    '# TYPE algohost_cold_starts_total counter',
    `algohost_cold_starts_total ${pool.coldStarts}`,
    '# HELP algohost_runner_failures_total Calls that failed in the runner, by error type.',
    '# TYPE algohost_runner_failures_total counter',
    ...Object.entries(pool.failures).map(([type, n]) => `algohost_runner_failures_total{error_type="${type}"} ${n}`),
    '# HELP algohost_runners Warm runners on this node when last counted.',
    '# TYPE algohost_runners gauge',
    `algohost_runners ${pool.runners}`,
  ];
  return `${lines.join('\n')}\n`;
}
