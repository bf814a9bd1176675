// The agent's side of the IPC channel: what `pole-bench agent` runs. Announces `ready`, waits for
// `start`, runs a LoadAgent whose messages go back over the channel, relays `phase` and `stop`, and
// treats the loss of the channel (the harness died) as `stop`. Resolves with the exit code once
// everything it sent has been handed to the channel.
import { LoadAgent, type WriteClientFor } from './load-agent.js';
import { AGENT_PROTOCOL_VERSION, DEFAULT_AGENT_NICE, msg, parseHarnessMessage } from './agent-protocol.js';
import type { AgentMessage, DoneMessage, HarnessMessage } from './agent-protocol.js';
import { raiseProcessPriority } from './process-priority.js';
import { hrMs } from './wake-clock.js';
import { wallNowMs } from '../util/wall-clock.js';

/** The part of a child process's `process` this needs (an interface, so tests can fake it). */
export interface IpcChannel {
  readonly pid: number;
  readonly connected: boolean;
  send?: (message: unknown, callback: (error: Error | null) => void) => boolean;
  disconnect?: () => void;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
}

export async function serveAgentOverIpc(channel: IpcChannel, clientFor: WriteClientFor): Promise<number> {
  const send = channel.send?.bind(channel);
  if (!send) throw new Error('no IPC channel');
  let pending = 0;
  let flushed: (() => void) | undefined;
  const emit = (m: AgentMessage): void => {
    if (!channel.connected) return;
    pending += 1;
    send(m, () => {
      pending -= 1;
      if (pending === 0) flushed?.();
    });
  };
  const flush = (): Promise<void> =>
    pending === 0 || !channel.connected ? Promise.resolve() : new Promise((resolve) => (flushed = resolve));

  let agent: LoadAgent | undefined;
  let stopBeforeStart = false;
  let initialPhase: string | undefined;
  let failure: string | undefined;
  let begin!: (a: LoadAgent | undefined) => void;
  const begun = new Promise<LoadAgent | undefined>((resolve) => (begin = resolve));

  const onMessage = (raw: unknown): void => {
    // The clock is read before the message is parsed: what parsing costs would only move the
    // answer off the middle of the harness's round trip.
    const monoMs = hrMs();
    const wallMs = wallNowMs();
    let m: HarnessMessage;
    try {
      m = parseHarnessMessage(raw);
    } catch (err) {
      failure ??= (err as Error).message;
      agent?.stop();
      begin(undefined);
      return;
    }
    switch (m.type) {
      case 'start': {
        if (agent) {
          failure ??= 'a second start message';
          agent.stop();
          return;
        }
        const { v: _v, type: _t, ...spec } = m;
        const nice = spec.nice === undefined ? DEFAULT_AGENT_NICE : spec.nice;
        const niceSet = nice !== null && raiseProcessPriority(nice);
        agent = new LoadAgent({ ...spec, phase: initialPhase ?? spec.phase }, emit, clientFor, {
          nice: niceSet ? nice : null,
        });
        if (stopBeforeStart) agent.stop();
        begin(agent);
        return;
      }
      case 'phase':
        if (agent) agent.setPhase(m.name, m.atMs);
        else initialPhase = m.name;
        return;
      case 'clock':
        // The clocks the agent's instants (load-agent.ts `wall`) and traces (`mono`) are stamped
        // with, answered at once: one small message, off the send loop's path (its own timers).
        emit(msg.clockAnswer(m.id, wallMs, monoMs));
        return;
      case 'stop':
        if (agent) agent.stop();
        else {
          stopBeforeStart = true;
          begin(undefined);
        }
        return;
    }
  };
  const onDisconnect = (): void => {
    if (agent) agent.stop();
    else begin(undefined);
  };
  channel.on('message', onMessage);
  channel.on('disconnect', onDisconnect);
  try {
    emit(msg.ready(channel.pid));
    const a = await begun;
    if (a) await a.run();
    // Stopped before it was started: `done` still ends the conversation, with nothing in it.
    else if (stopBeforeStart && failure === undefined) emit(emptyDone());
    if (failure !== undefined) emit(msg.error(failure));
  } catch (err) {
    failure ??= (err as Error).message;
    emit(msg.error(failure));
  } finally {
    channel.off('message', onMessage);
    channel.off('disconnect', onDisconnect);
  }
  await flush();
  if (channel.connected) channel.disconnect?.();
  return failure === undefined ? 0 : 1;
}

function emptyDone(): DoneMessage {
  const now = wallNowMs();
  const zero = { count: 0, mean: 0, sd: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
  return {
    v: AGENT_PROTOCOL_VERSION,
    type: 'done',
    dc: '',
    startMs: now,
    sendEndMs: now,
    totals: { attempted: 0, acked: 0, failed: 0, timedOut: 0, overflow: 0, retries: 0 },
    phases: {},
    lateness: zero,
    targetRate: 0,
    achievedRate: 0,
    sentRate: 0,
    firstAckAfter: {},
    firstAckByEpoch: {},
    longestAckGap: {},
    acked: [],
    clientId: '',
    traces: [],
  };
}
