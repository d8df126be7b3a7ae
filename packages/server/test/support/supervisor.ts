import { Supervisor, type SupervisorOptions } from '../../src/runtime/sandbox/supervisor.js';

/** A supervisor that has taken the host's cgroups, as the node's start step does. */
export function preparedSupervisor(options?: SupervisorOptions): Supervisor {
  const supervisor = new Supervisor(options);
  supervisor.prepare();
  return supervisor;
}
