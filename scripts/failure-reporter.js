// A reporter for Node's test runner that writes, for each failed test, its name, file and the
// first lines of its error: scripts/run-tests.js prints them again after every batch, so a failure
// in the middle of a long CI log is read at its end (where a log cut to its head and tail shows it).
const MAX_LINES = 40;

function errorText(error) {
  const cause = error?.cause ?? error;
  // The stack starts with the message; the runner's own frames say nothing of the failure.
  const text = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
  const lines = text.split('\n').filter((l) => !/\(node:(internal|async_hooks)/.test(l));
  return lines.length > MAX_LINES
    ? [...lines.slice(0, MAX_LINES), `… ${lines.length - MAX_LINES} more lines`]
    : lines;
}

export default async function* failureReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A file's own entry fails with its tests; the tests say why.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    yield `not ok: ${name}${file ? ` (${file})` : ''}\n`;
    for (const line of errorText(details?.error)) yield `    ${line}\n`;
  }
}
