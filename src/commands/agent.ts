// `pole-bench agent`: one data center's load agent. Not for people: `pole-bench run` (and
// `pole-bench bench load`) start it as a child process and drive it over the Node IPC channel
// (see src/load/agent-protocol.ts). It exits 0 after sending `done`, 1 after sending `error`.
import { Command } from '@oclif/core';
import { serveAgentOverIpc } from '../load/agent-ipc.js';

export default class AgentCommand extends Command {
  static override hidden = true;

  static override summary = "Run one data center's open-loop load agent (started by `pole-bench run`).";

  async run(): Promise<void> {
    await this.parse(AgentCommand);
    if (process.send === undefined) {
      this.error('pole-bench agent is started by `pole-bench run`', { exit: 2 });
    }
    const code = await serveAgentOverIpc(process);
    // Everything has been handed to the channel and the connections are closed; exit now rather
    // than wait for stray timers (a write's backoff) to run out.
    process.exit(code);
  }
}
