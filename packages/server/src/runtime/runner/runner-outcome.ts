/** What a call to a runner ends with: its answer, or a failure of the runner itself. */
import type { PipeResponse } from '../../domain/calls/ports.js';
import type { Outcome } from '../sandbox/supervisor.js';

export interface CallOutcome {
  response: PipeResponse;
  stdout: string;
  /** How long it waited in the runner behind another call before the harness could read it. */
  waitedMs?: number;
}

/** Failures of the runner itself, mapped to the platform's error types by the caller. */
export class RunnerFailure extends Error {
  constructor(
    readonly errorType: 'TimeoutError' | 'OutOfMemoryError' | 'SystemExit' | 'TooLargeError' | 'LoadingError',
    message: string,
    /**
     * The end of what explains it: the failing call's own output, or the load-time output. Kept
     * out of `message`, which every caller sees; output is for the algorithm's members only.
     */
    readonly output?: string,
  ) {
    super(message);
  }
}

/**
 * A call written behind another one that the runner never began (it died first): it ran nowhere
 * and can be sent to another runner as it is.
 */
export class CallNotStarted extends Error {
  constructor() {
    super('the runner stopped before it began this call');
  }
}

/** How much of the output that explains a failure goes with it (RunnerFailure.output). */
export const FAILURE_OUTPUT_CHARS = 2000;

export function describe(o: Outcome): string {
  if (o.kind === 'exited') return `exit code ${o.code}`;
  return o.reason === 'signal' ? `killed by ${o.signal}` : `killed: ${o.reason}`;
}
