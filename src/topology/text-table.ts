// Plain-text tables for terminal output: columns padded to their widest cell, two spaces apart.

export interface TableOptions {
  /** Column indexes to right-align (numbers). */
  readonly alignRight?: readonly number[];
}

export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  opts: TableOptions = {},
): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const right = new Set(opts.alignRight ?? []);
  return all
    .map((r) =>
      widths
        .map((w, i) => {
          const cell = r[i] ?? '';
          return right.has(i) ? cell.padStart(w) : cell.padEnd(w);
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A number for a table: up to 2 decimals, no trailing zeros; "-" for none. */
export function num(v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '-';
  return String(Math.round(v * 100) / 100);
}
