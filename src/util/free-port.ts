// Ask the kernel for free loopback ports (bind to port 0, read it, release it). The node's peers
// must know each other's ports before any of them starts, so ephemeral ports chosen by each
// process are not enough.
import { createServer, type Server } from 'node:net';

export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, host, () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const a = s.address();
    if (a === null || typeof a === 'string') throw new Error('no port bound');
    return a.port;
  });
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}
