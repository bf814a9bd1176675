// The agent's protocol over JSON lines on stdin/stdout, for an agent the harness cannot fork with
// an IPC channel (one in a container: `docker run -i … agent --stdio`). Shaped like the part of
// `process` that serveAgentOverIpc uses, so the agent itself does not know the difference.
import { EventEmitter } from 'node:events';
import { createInterface } from 'node:readline';
import type { IpcChannel } from './agent-ipc.js';

export function stdioChannel(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): IpcChannel {
  const events = new EventEmitter();
  let connected = true;
  const close = (): void => {
    if (!connected) return;
    connected = false;
    events.emit('disconnect');
  };
  createInterface({ input })
    .on('line', (line) => {
      if (line.trim() === '') return;
      let m: unknown;
      try {
        m = JSON.parse(line);
      } catch {
        m = { type: 'not-json', line };
      }
      events.emit('message', m);
    })
    .on('close', close);
  return {
    pid: process.pid,
    get connected() {
      return connected;
    },
    send: (message, callback) => output.write(`${JSON.stringify(message)}\n`, (err) => callback(err ?? null)),
    disconnect: close,
    on: (event: string, listener: (m?: unknown) => void) => events.on(event, listener),
    off: (event: string, listener: (m?: unknown) => void) => events.off(event, listener),
  } as IpcChannel;
}
