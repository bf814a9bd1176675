import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import validator from '@action-validator/core';
import { loadSuite } from '../../src/experiment/suite-file.js';
import { planRuns } from '../../src/experiment/suite-runner.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORKFLOW = join(ROOT, '.github', 'workflows', 'nightly.yml');

interface Step {
  readonly name?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly env?: Record<string, string>;
}

describe('the nightly workflow', () => {
  const text = readFileSync(WORKFLOW, 'utf8');
  const wf = parse(text) as {
    on: { schedule: { cron: string }[] };
    jobs: Record<string, { steps: Step[]; 'timeout-minutes': number }>;
  };
  const steps = Object.values(wf.jobs).flatMap((j) => j.steps);

  it('is a valid GitHub Actions workflow (action-validator, the schema GitHub publishes)', () => {
    const state = validator.validateWorkflow(text);
    assert.deepEqual(state.errors, [], JSON.stringify(state.errors, null, 2));
  });

  it('runs nightly on a schedule, bounded, with the same script CI runs here', () => {
    assert.equal(wf.on.schedule[0]?.cron.split(' ').length, 5);
    for (const job of Object.values(wf.jobs)) assert.ok(job['timeout-minutes'] > 0);
    const suite = steps.find((s) => s.run?.includes('scripts/nightly.sh'));
    assert.ok(suite, 'a step runs scripts/nightly.sh');
    assert.equal(suite.env?.['RUNTIME'], 'docker');
    accessSync(join(ROOT, 'scripts', 'nightly.sh'), constants.X_OK);
    assert.ok(
      steps.some((s) => s.run?.includes('image build --offline')),
      'images built offline',
    );
    assert.ok(
      steps.some((s) => s.uses?.startsWith('actions/upload-artifact@')),
      'outputs kept',
    );
    assert.ok(
      steps.some((s) => s.run?.includes('gh run download')),
      'the previous night fetched',
    );
  });

  it('runs a suite whose every cell fits its topology, in the quick variant too', () => {
    for (const quick of [false, true]) {
      const suite = loadSuite(join(ROOT, 'suites', 'nightly.yaml'), { quick });
      assert.equal(suite.cells.length, 4);
      assert.ok(suite.repeats >= 2, 'repeats give compare a noise allowance');
      assert.equal(planRuns(suite, '/nonexistent').length, 4 * suite.repeats);
    }
  });
});
