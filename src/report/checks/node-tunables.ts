// The report names the tunables the harness gave the POLE nodes; each node says what its own
// process read. Apart, a runtime lost them on the way (a container's Env, a task's start script),
// and the report's line, and what it says of a killed node's death, is wrong for that node.
import type { Check } from './check-kit.js';

export const nodeTunables = {
  id: 'nodeTunables',
  what: 'every POLE node started with the glibc tunables the report names',
  run: (r, fail, skip) => {
    const { nodeTunables, nodeTunablesSeen } = r.environment;
    if (nodeTunables === undefined || nodeTunablesSeen === undefined)
      return skip(`${r.target}'s members say nothing of the tunables they started with`);
    for (const [node, seen] of Object.entries(nodeTunablesSeen))
      if (seen !== nodeTunables)
        fail(`${node} read ${seen === null ? 'none' : `"${seen}"`}, not "${nodeTunables}"`);
  },
} as const satisfies Check;
