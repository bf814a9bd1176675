// Vega-Lite specs to SVG text, headless: vega's scenegraph renders to an SVG string with no
// browser and no canvas (text widths are estimated, which is close enough for axis labels).
// Every chart carries its data inline; the loader refuses any URL so that rendering a report can
// never reach the network.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export type ChartSpec = TopLevelSpec;

const noNetwork: vega.Loader = {
  ...vega.loader(),
  load: (uri: string) => Promise.reject(new Error(`charts carry their data inline; refused to load ${uri}`)),
  sanitize: (uri: string) => Promise.reject(new Error(`charts carry their data inline; refused ${uri}`)),
  http: (uri: string) => Promise.reject(new Error(`charts carry their data inline; refused ${uri}`)),
  file: (file: string) => Promise.reject(new Error(`charts carry their data inline; refused ${file}`)),
};

/**
 * Vega-Lite's and Vega's warnings name a spec's weak points: they go to the caller, not to the
 * console. Vega calls these methods unbound, so they are closures over `warnings`.
 */
function collectingLogger(warnings: string[]): vega.LoggerInterface {
  let level = vega.Warn;
  const logger: vega.LoggerInterface = {
    level: ((l?: number) => {
      if (l === undefined) return level;
      level = l;
      return logger;
    }) as vega.LoggerInterface['level'],
    warn: (...args: readonly unknown[]) => {
      warnings.push(args.join(' '));
      return logger;
    },
    info: () => logger,
    debug: () => logger,
    error: (...args: readonly unknown[]) => {
      throw new Error(`chart spec: ${args.join(' ')}`);
    },
  };
  return logger;
}

export interface RenderedSvg {
  readonly svg: string;
  /** What Vega-Lite or Vega warned about while rendering (empty for a clean spec). */
  readonly warnings: readonly string[];
}

/**
 * The SVG document of one Vega-Lite spec. The spec is copied first: Vega tags the data objects it
 * ingests, and the caller's result must stay as it was.
 */
export async function renderSvg(spec: ChartSpec): Promise<RenderedSvg> {
  const warnings: string[] = [];
  const logger = collectingLogger(warnings);
  const { spec: compiled } = compile(JSON.parse(JSON.stringify(spec)) as ChartSpec, { logger });
  const view = new vega.View(vega.parse(compiled), {
    renderer: 'none',
    loader: noNetwork,
    logger,
    logLevel: vega.Warn,
  });
  try {
    return { svg: await view.toSVG(), warnings };
  } finally {
    view.finalize();
  }
}
