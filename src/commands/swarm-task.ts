// `pole-bench swarm-task ROLE`: what the swarm runtime's services run (src/runtime/swarm/). Not for
// people: each task dials the harness named in its environment and serves its role over that
// connection: `agent` (a data center's load agent), `relay` (the delay relay), `faults` (a node's
// fault helper, with the node's Docker socket). It exits when the harness hangs up or, for an
// agent, after its `done`.
import { Args } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import type { Socket } from 'node:net';
import { TASK_ENV } from '../runtime/swarm/swarm-plan.js';
import { dialHarness } from '../runtime/swarm/swarm-rendezvous.js';

/** How long the last bytes may take to leave once the task is done. */
const FLUSH_MS = 5_000;

export default class SwarmTask extends CliCommand {
  static override hidden = true;

  static override summary =
    'Serve one task of the swarm runtime (started by `pole-bench run --runtime swarm`).';

  static override args = {
    role: Args.string({ options: ['agent', 'relay', 'faults'], required: true }),
  };

  async run(): Promise<void> {
    const { args } = await this.parse(SwarmTask);
    const env = process.env;
    let code = 0;
    try {
      // Each role imports only its own modules: a task's start is CPU its node's members wait for
      // (the fault helper's dockerode alone is 0.3 s of CPU, the agent's histograms 0.2 s).
      if (args.role === 'agent') {
        const { serveAgentOverIpc } = await import('../load/agent-ipc.js');
        const { stdioChannel } = await import('../load/stdio-channel.js');
        const dc = env[TASK_ENV.dc] ?? '';
        const socket = await dialHarness('agent', dc);
        code = await serveAgentOverIpc(
          stdioChannel(socket, socket),
          (await import('../targets/clients.js')).writeClientFor,
        );
        await ended(socket);
      } else if (args.role === 'relay') {
        const { serveRelay } = await import('../runtime/swarm/relay-service.js');
        await serveRelay(await dialHarness('relay', ''));
      } else {
        const run = env[TASK_ENV.run];
        if (!run) this.error(`${TASK_ENV.run} must be set`, { exit: 2 });
        const { serveFaults } = await import('../runtime/swarm/fault-helper.js');
        await serveFaults(await dialHarness('faults', env[TASK_ENV.node] ?? ''), run);
      }
    } catch (err) {
      process.stderr.write(`swarm-task ${args.role}: ${(err as Error).message}\n`);
      code = 3;
    }
    process.exit(code);
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
