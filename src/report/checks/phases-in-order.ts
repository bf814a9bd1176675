// Detection, election, serving and the first commit are stamped by different processes (the
// members, the agents); a phase stamped before the one it follows is a clock or a parse gone
// wrong.
import { type Check, f } from './check-kit.js';

export const phasesInOrder = {
  id: 'phasesInOrder',
  what: 'recovery phases in order (detected ≤ elected ≤ serving ≤ first commit)',
  run: (r, fail, skip) => {
    const order: Array<[string, number | null]> = [
      ['detected', r.recovery.detectMs],
      ['elected', r.recovery.electedMs],
      ['serving', r.recovery.servingMs],
      ['first commit', r.recovery.firstCommitMs],
    ];
    const seen = order.filter((p): p is [string, number] => p[1] !== null);
    if (seen.length < 2) return skip('fewer than two recovery phases were seen');
    for (let i = 1; i < seen.length; i++)
      if (seen[i]![1] < seen[i - 1]![1])
        fail(`${seen[i]![0]} ${f(seen[i]![1])} ms before ${seen[i - 1]![0]} ${f(seen[i - 1]![1])} ms`);
  },
} as const satisfies Check;
