// Sizes in topology files ("250MB", "512kB", "1.5GiB"): decimal units (kB, MB, GB: powers of
// 1000, as the paper's "250 MB") and binary ones (KiB, MiB, GiB), never a bare number, so that a
// missing unit cannot silently mean bytes.
export const BYTE_SIZE_PATTERN = '^(\\d+(?:\\.\\d+)?|\\.\\d+)\\s*(B|kB|KB|MB|GB|KiB|MiB|GiB)$';
export const BYTE_SIZE_HINT = 'a size with a unit, like "250MB", "512kB" or "1GiB"';

const UNITS: Readonly<Record<string, number>> = {
  B: 1,
  kB: 1e3,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
};

/** "250MB" → 250000000. Throws on anything that does not match BYTE_SIZE_PATTERN. */
export function parseByteSize(text: string): number {
  const m = new RegExp(BYTE_SIZE_PATTERN).exec(text.trim());
  if (!m) throw new Error(`expected ${BYTE_SIZE_HINT}, got ${JSON.stringify(text)}`);
  return Math.round(Number(m[1]) * (UNITS[m[2] as string] as number));
}
