// placeholder replaced below
import type { NodeConfig } from './config.js';
export async function runNode(_config: NodeConfig): Promise<void> {
  throw new Error('not yet');
}
