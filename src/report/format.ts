// How the report writes numbers, so every section agrees: milliseconds with two decimals, counts
// with thousands separators, rates with one decimal, differences as signed percentages. Nothing
// here depends on the locale (a report must read the same on every machine). Missing values are
// "-".

export const NONE = '-';

type Maybe = number | null | undefined;

function missing(v: Maybe): v is null | undefined {
  return v === null || v === undefined || !Number.isFinite(v);
}

/** 9.876 → "9.88" (ms, no unit). */
export function ms(v: Maybe): string {
  return missing(v) ? NONE : group(v.toFixed(2));
}

/** 9.876 → "9.88 ms". */
export function msUnit(v: Maybe): string {
  return missing(v) ? NONE : `${ms(v)} ms`;
}

/** Seconds with one decimal: 60 → "60.0 s". */
export function secUnit(v: Maybe): string {
  return missing(v) ? NONE : `${group(v.toFixed(1))} s`;
}

/** 120000 → "120,000". */
export function count(v: Maybe): string {
  return missing(v) ? NONE : group(Math.round(v).toString());
}

/** Writes per second: 998.66 → "998.7". */
export function rate(v: Maybe): string {
  return missing(v) ? NONE : group(v.toFixed(1));
}

/** Fractions as percentages: 0.3333 → "33.3%". */
export function percent(fraction: Maybe): string {
  return missing(fraction) ? NONE : `${(fraction * 100).toFixed(1)}%`;
}

/** How far `actual` is from `expected`, signed: (10.3, 10) → "+3.0%". "-" without a base. */
export function diffPercent(actual: Maybe, expected: Maybe): string {
  if (missing(actual) || missing(expected) || expected === 0) return NONE;
  const d = ((actual - expected) / expected) * 100;
  const fixed = d.toFixed(1);
  // -0.04 rounds to "-0.0"; a difference that rounds to nothing has no sign.
  if (Number(fixed) === 0) return '0.0%';
  return `${d > 0 ? '+' : ''}${fixed}%`;
}

/** A score vector: [12.5] → "12.5", [3, 7] → "(3, 7)". */
export function score(v: readonly number[]): string {
  const parts = v.map((x) => String(Math.round(x * 1000) / 1000));
  return parts.length === 1 ? (parts[0] ?? '') : `(${parts.join(', ')})`;
}

/** Text for a markdown table cell: pipes escaped, line breaks flattened. */
export function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** A markdown table. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  alignRight: readonly number[] = [],
): string {
  const right = new Set(alignRight);
  const line = (cells: readonly string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${header.map((_, i) => (right.has(i) ? '---:' : '---')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Thousands separators in the integer part of a plain decimal string. */
function group(text: string): string {
  const m = /^(-?)(\d+)(\.\d+)?$/.exec(text);
  if (!m) return text;
  return `${m[1] ?? ''}${(m[2] ?? '').replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${m[3] ?? ''}`;
}
