// Which folder of src/ may import which: the house's layers, and the one direction the arrows run
// between them. `npm run lint` checks it (depcruise), type-only imports included.
//
// The layers, bottom first. A folder may import its own files and the folders of the layers below
// it; never a folder of a higher layer, nor another folder of its own layer:
//
//    1. util        generic helpers (durations, free ports, input errors, spreads, random): nothing
//                   of src/ outside util/, so anything may use them
//    2. vocabulary  what several layers must agree on: node ids, zxids, addresses, target, image and
//                   shaping names, fault actions and marks, the final read's records (names.ts); the
//                   members' events (node-events.ts); result.json's schema and document ids
//                   (result-schema.ts); the threshold language over it (thresholds.ts)
//    3. node        the POLE node (core, log, net, sim, trace): vocabulary and util only
//    4. topology    topology files and what they resolve to, the latency model
//       check       the safety checkers over a history (linearizability per key): pure
//    5. shaping     how delay gets between data centers (relay, netem)
//       image       how images are built (each target's recipe is in its folder)
//    6. load        the load agents and the write clients
//    7. measure     CPU, resources, the node floor
//       targets     the systems under test (POLE, ZooKeeper, etcd)
//    8. runtime     where members run: a folder per runtime (process, docker, swarm, the last with
//                   the local Docker Swarm of DinD hosts that `swarm up/down` make), each
//                   registered in runtime/registry.ts
//    9. report      result.json, report.md, charts, compare
//   10. chaos       the faults a run carries out
//   11. run         one run, start to verdict
//   12. election    the election-only tool
//       experiment  suites of runs
//       bench       measurements of pole-bench's own parts
//   13. doctor      what this machine and user can run, and why not (asks the election backends too)
//   14. commands    the CLI (oclif): may import anything below
//
// A folder of src/ that is in no layer fails the check: place a new one in the list.
//
// Arrows against the direction, each allowed for its one file and no other (none now; a new one
// must say why here, as { from, to, why }).
const EXCEPTIONS = [];

const LAYERS = [
  ['util'],
  ['vocabulary'],
  ['node'],
  ['topology', 'check'],
  ['shaping', 'image'],
  ['load'],
  ['measure', 'targets'],
  ['runtime'],
  ['report'],
  ['chaos'],
  ['run'],
  ['election', 'experiment', 'bench'],
  ['doctor'],
  ['commands'],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const under = (folders) => `^src/(${folders.join('|')})/`;

function layerRules() {
  const rules = [];
  LAYERS.forEach((layer, i) => {
    const below = LAYERS.slice(0, i).flat();
    for (const folder of layer) {
      const allowed = [folder, ...below];
      const comment =
        below.length > 0
          ? `${folder}/ may import only ${below.join(', ')} (the layers below it)`
          : `${folder}/ imports nothing of src/ outside itself`;
      const exceptions = EXCEPTIONS.filter((e) => e.from.startsWith(`src/${folder}/`));
      const excepted = [...new Set(exceptions.map((e) => e.from))];
      rules.push({
        name: `layer-${folder}`,
        severity: 'error',
        comment,
        from: { path: `^src/${folder}/`, pathNot: excepted.map((f) => `^${escape(f)}$`) },
        to: { path: '^src/', pathNot: under(allowed) },
      });
      for (const file of excepted) {
        const extra = exceptions.filter((e) => e.from === file).map((e) => `^${escape(e.to)}$`);
        rules.push({
          name: `layer-${folder}`,
          severity: 'error',
          comment: `${comment}; this file also: ${exceptions
            .filter((e) => e.from === file)
            .map((e) => `${e.to} (${e.why})`)
            .join('; ')}`,
          from: { path: `^${escape(file)}$` },
          to: { path: '^src/', pathNot: [under(allowed), ...extra] },
        });
      }
    }
  });
  return rules;
}

// The POLE node's internals (its state machine, log, peer network, server, simulator) are the POLE
// target's, the node's own command's and the benchmarks' alone. Everyone else may use only its
// public surface, each part with why it is shared:
const NODE_PUBLIC = [
  {
    path: 'src/node/net/client.ts',
    why: "the node's client protocol: the load agents and the final read speak it",
  },
  {
    path: 'src/node/config.ts',
    why: "the node's config schema: a topology's cluster section is checked by it",
  },
  {
    path: 'src/node/core/oracles/',
    why: 'the election rules (oracles, scores) the latency model predicts with',
  },
  { path: 'src/node/core/proposal-order.ts', why: 'how proposals rank, which the model predicts with' },
  {
    path: 'src/node/core/types.ts',
    why: 'a member, a score, a txn: the shapes the model and the state bench share',
  },
  {
    path: 'src/node/trace/write-tracer.ts',
    why: 'which writes are traced: agents and helpers stamp the same ones',
  },
  { path: 'src/node/trace/trace-batch.ts', why: "the trace stamps' names, which the report shows" },
  {
    path: 'src/node/node-process-env.ts',
    why: 'the environment a node starts with, which runtimes and the report use',
  },
  {
    path: 'src/node/loop-stall-watch.ts',
    why: "the stall threshold the report states beside the node's stalls",
  },
];
const MAY_USE_NODE_INTERNALS = [
  'src/node/',
  'src/targets/pole/',
  'src/bench/',
  'src/commands/bench/',
  'src/commands/node.ts',
];

function nodeInternalsRule() {
  const exact = (p) => (p.endsWith('/') ? `^${escape(p)}` : `^${escape(p)}$`);
  return {
    name: 'node-internals',
    severity: 'error',
    comment: `only ${MAY_USE_NODE_INTERNALS.join(', ')} may import the POLE node's internals; others its public surface: ${NODE_PUBLIC.map((p) => `${p.path} (${p.why})`).join('; ')}`,
    from: { path: '^src/', pathNot: MAY_USE_NODE_INTERNALS.map(exact) },
    to: { path: '^src/node/', pathNot: NODE_PUBLIC.map((p) => exact(p.path)) },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    nodeInternalsRule(),
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'a module must not reach itself through its imports (type-only imports count)',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'layer-unknown',
      severity: 'error',
      comment: 'every folder of src/ belongs to a layer: add it to LAYERS in .dependency-cruiser.js',
      from: { path: '^src/', pathNot: under(LAYERS.flat()) },
      to: {},
    },
    ...layerRules(),
  ],
  options: {
    includeOnly: '^src/',
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
