// libfaketime, for the test that shifts a real process's wall clock (test/integration/
// clock-offset.test.ts): found where Debian's libfaketime package puts it, or where
// POLE_BENCH_LIBFAKETIME points. scripts/test-prerequisites.js installs the package where it can.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const LIBRARY = 'libfaketime.so.1';
const INSTALL = 'scripts/install-libfaketime.sh';

/** The library's path; throws, saying where it looked and how to install it, when it is absent. */
export function findLibfaketime(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.POLE_BENCH_LIBFAKETIME;
  if (override) {
    if (existsSync(override)) return override;
    throw new Error(`POLE_BENCH_LIBFAKETIME=${override}: no such file`);
  }
  // Debian: /usr/lib/<multiarch triplet>/faketime/; built from source: /usr/local/lib/faketime/.
  const triplets = existsSync('/usr/lib') ? readdirSync('/usr/lib').filter((d) => d.includes('-linux-')) : [];
  const candidates = [
    ...triplets.map((t) => join('/usr/lib', t, 'faketime', LIBRARY)),
    join('/usr/lib/faketime', LIBRARY),
    join('/usr/local/lib/faketime', LIBRARY),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (found) return found;
  throw new Error(
    `libfaketime is not installed (no ${LIBRARY} in /usr/lib/*/faketime/); ${INSTALL} installs it`,
  );
}

/** false when libfaketime is here, else why the test that needs it skips. */
export const faketimeSkip: string | false = (() => {
  try {
    findLibfaketime();
    return false;
  } catch (e) {
    return (e as Error).message;
  }
})();
