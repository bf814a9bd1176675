// Free TCP ports for nodes to listen on: peers must know each other's ports before any of them
// starts, so each process picking its own ephemeral port is not enough. Chosen BELOW the kernel's ephemeral range: a port from
// that range, free when we look, can be taken a moment later as the source port of some outgoing
// connection (the relay's, an agent's), and the node meant to listen on it then fails to start.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** The first ephemeral port (Linux: net.ipv4.ip_local_port_range), 32768 when unknown. */
function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > 2048 ? n : 32768;
  } catch {
    return 32768;
  }
}

function tryListen(port: number, host: string): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, host, () => resolve(s));
  });
}

/** `count` distinct ports that can be listened on now, from [1024 .. ephemeral start). */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const low = 10_000;
  const high = ephemeralStart() - 1;
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let tries = 0; ports.length < count && tries < count * 50; tries++) {
      const port = low + Math.floor(Math.random() * (high - low + 1));
      if (ports.includes(port)) continue;
      const s = await tryListen(port, host);
      if (!s) continue;
      held.push(s);
      ports.push(port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
  if (ports.length < count) throw new Error(`could not find ${count} free ports in ${low}-${high}`);
  return ports;
}
