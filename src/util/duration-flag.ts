// One flag type for every duration on the command line, read exactly like durations in topology
// files ("10s", "500ms", "1.5m"): a unit is required, since a bare "10" could mean ms or s and a
// wrong guess makes a run silently meaningless. The value is in milliseconds; bad input exits 2.
import { Errors, Flags } from '@oclif/core';
import { DURATION_HINT, DurationError, formatDuration, parseDuration } from './duration.js';

export interface DurationFlagOptions {
  readonly description: string;
  /** As written by a person, e.g. "10s". */
  readonly default: string;
  /** Smallest accepted value, ms. */
  readonly minMs?: number;
}

export function durationFlag(opts: DurationFlagOptions) {
  const parse = async (input: string): Promise<number> => {
    let ms: number;
    try {
      ms = parseDuration(input);
    } catch (err) {
      if (!(err instanceof DurationError)) throw err;
      const bare = /^\d+(\.\d+)?$/.test(input.trim());
      throw new Errors.CLIError(
        `expected ${DURATION_HINT}, got ${JSON.stringify(input)}` +
          (bare ? ` (a bare number has no unit: write ${input.trim()}s or ${input.trim()}ms)` : ''),
        { exit: 2 },
      );
    }
    if (opts.minMs !== undefined && ms < opts.minMs)
      throw new Errors.CLIError(
        `must be at least ${formatDuration(opts.minMs)}, got ${JSON.stringify(input)}`,
        {
          exit: 2,
        },
      );
    return ms;
  };
  return Flags.custom<number>({ description: opts.description, parse })({
    default: async () => parse(opts.default),
    // Help shows the default as written ("10s"), as every other duration on the command line.
    defaultHelp: async () => opts.default,
    helpValue: '<duration>',
  });
}
