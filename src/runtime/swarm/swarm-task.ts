// What the swarm runtime's services run (swarm-task-main.js ROLE in the node image): each task
// dials the harness named in its environment and serves its role over that connection: `agent` (a
// data center's load agent), `relay` (the delay relay), `faults` (a node's fault helper, with the
// node's Docker socket). It ends when the harness hangs up or, for an agent, after its `done`.
import type { Socket } from 'node:net';
import { TASK_ENV, type TaskRole } from './swarm-plan.js';
import { dialHarness } from './swarm-rendezvous.js';

/** How long the last bytes may take to leave once the task is done. */
const FLUSH_MS = 5_000;

/** Serves `role` until it is done; resolves with the process's exit code (3: it failed, said on stderr). */
export async function serveSwarmTask(role: TaskRole, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    // Each role imports only its own modules: a task's start is CPU its node's members wait for
    // (the fault helper's dockerode alone is 0.3 s of CPU, the agent's histograms 0.2 s).
    if (role === 'agent') {
      const { serveAgentOverIpc } = await import('../../load/agent-ipc.js');
      const { stdioChannel } = await import('../../load/stdio-channel.js');
      const socket = await dialHarness('agent', env[TASK_ENV.dc] ?? '');
      const code = await serveAgentOverIpc(
        stdioChannel(socket, socket),
        (await import('../../targets/registry.js')).writeClientFor,
      );
      await ended(socket);
      return code;
    }
    if (role === 'relay') {
      const { serveRelay } = await import('./relay-service.js');
      await serveRelay(await dialHarness('relay', ''));
      return 0;
    }
    const run = env[TASK_ENV.run];
    if (!run) throw new Error(`${TASK_ENV.run} must be set`);
    const { serveFaults } = await import('./fault-helper.js');
    await serveFaults(await dialHarness('faults', env[TASK_ENV.node] ?? ''), run);
    return 0;
  } catch (err) {
    process.stderr.write(`swarm-task ${role}: ${(err as Error).message}\n`);
    return 3;
  }
}

/** Ends the connection and waits (bounded) until the harness has it all: a FIN, not a reset. */
function ended(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.end();
  });
}
