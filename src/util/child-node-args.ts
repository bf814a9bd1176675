/**
 * Extra V8/Node flags for the node and agent processes a run spawns, from POLE_BENCH_NODE_ARGS
 * (space-separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile every process of a
 * run. Node refuses --cpu-prof in NODE_OPTIONS, hence a variable of our own. Only flags are
 * accepted: anything not starting with `--` is refused so the variable cannot change what runs.
 */
export function childNodeArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env['POLE_BENCH_NODE_ARGS']?.trim();
  if (!raw) return [];
  const args = raw.split(/\s+/);
  const bad = args.find((a) => !a.startsWith('--'));
  if (bad !== undefined) throw new Error(`POLE_BENCH_NODE_ARGS: "${bad}" is not a --flag`);
  return args;
}
