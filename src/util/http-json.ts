// GET a node's JSON status page (or any small JSON document) from the harness side.
import { request } from 'node:http';

/** The parsed JSON body of GET `path` (default /status), with a 5 s timeout. */
export function getJson(addr: { host: string; port: number }, path = '/status'): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ host: addr.host, port: addr.port, path, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(err as Error);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
