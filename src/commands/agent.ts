// `pole-bench agent`: one data center's load agent. Not for people: `pole-bench run` (and
// `pole-bench bench load`) start it as a child process and drive it over the Node IPC channel
// (see src/load/agent-protocol.ts). It exits 0 after sending `done`, 1 after sending `error`.
import { Flags } from '@oclif/core';
import { CliCommand } from '../util/cli-command.js';
import { serveAgentOverIpc } from '../load/agent-ipc.js';
import { writeClientFor } from '../targets/registry.js';
import { stdioChannel } from '../load/stdio-channel.js';

export default class AgentCommand extends CliCommand {
  static override hidden = true;

  static override summary = "Run one data center's open-loop load agent (started by `pole-bench run`).";

  static override flags = {
    stdio: Flags.boolean({
      description: 'speak the protocol as JSON lines on stdin/stdout (agents in containers)',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentCommand);
    if (!flags.stdio && process.send === undefined) {
      this.error('pole-bench agent is started by `pole-bench run`', { exit: 2 });
    }
    const code = await serveAgentOverIpc(
      flags.stdio ? stdioChannel(process.stdin, process.stdout) : process,
      writeClientFor,
    );
    // Everything has been handed to the channel and the connections are closed; exit now rather
    // than wait for stray timers (a write's backoff) to run out.
    process.exit(code);
  }
}
