// A mistyped command: say which command was meant, in a pipe as at a terminal, and end with exit 2
// (bad input, as every other wrong argument). Hidden commands (the agent, the swarm task) are never
// suggested: nobody types them.
import type { Hook } from '@oclif/core';
import { distance } from 'fastest-levenshtein';

/** Beyond this many edits the closest command is no longer a likely typo of the one typed. */
const MAX_EDITS = 3;

const hook: Hook.CommandNotFound = async function (opts) {
  const ids = opts.config.commands.filter((c) => !c.hidden).map((c) => c.id);
  const typed = opts.id.split(':').join(' ');
  // The words typed after a command are its arguments: each command is held against as many
  // words as it has (`comapre a b` is `compare` mistyped, with two arguments).
  const words = opts.id.split(':');
  let near: string | undefined;
  let least = Infinity;
  for (const id of ids) {
    const d = distance(words.slice(0, id.split(':').length).join(':'), id);
    if (d < least) [near, least] = [id, d];
  }
  const hint =
    near !== undefined && least <= MAX_EDITS
      ? ` Did you mean \`${opts.config.bin} ${near.split(':').join(' ')}\`?`
      : '';
  this.error(
    `\`${typed}\` is not a ${opts.config.bin} command.${hint} \`${opts.config.bin} help\` lists them.`,
    {
      exit: 2,
    },
  );
};

export default hook;
