#!/usr/bin/env bash
# The nightly regression check, step by step; .github/workflows/nightly.yml runs exactly this, and
# CI here runs it too (test/integration/nightly-script.test.ts), so the workflow's steps are tested
# where the workflow itself cannot run.
#
#   SUITE=suites/nightly.yaml RUNTIME=docker OUT=nightly BASELINE=previous/suite scripts/nightly.sh
#
#   SUITE     the suite file (default suites/nightly.yaml); QUICK=1 runs its quick variant
#   RUNTIME   where the runs' nodes run (default docker: the images must be built, see
#             `pole-bench image build --offline`)
#   OUT       output directory (default nightly): OUT/suite holds the suite's outputs,
#             OUT/benchmark.json the metrics for github-action-benchmark, OUT/summary.md the summary
#   BASELINE  a previous night's OUT/suite; without one nothing is compared (the first night)
#
# Exit codes: 0 no regression; 1 a regression, or a run's threshold failed; 2 bad input; 3 a run
# or the suite itself failed; 4 a run was suspect (its own cross-checks disagree: its figures, and
# any comparison with them, cannot be trusted). The summary also goes to $GITHUB_STEP_SUMMARY when
# it is set.
set -uo pipefail
cd "$(dirname "$0")/.."

suite="${SUITE:-suites/nightly.yaml}"
runtime="${RUNTIME:-docker}"
out="${OUT:-nightly}"
baseline="${BASELINE:-}"
quick=()
[[ "${QUICK:-0}" == 1 ]] && quick=(--quick)
summary="$out/summary.md"
mkdir -p "$out"

say() { echo "nightly: $*" >&2; }
note() { echo "$*" >>"$summary"; [[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && echo "$*" >>"$GITHUB_STEP_SUMMARY"; return 0; }

: >"$summary"
say "suite $suite on the $runtime runtime into $out/suite"
node bin/run.js suite "$suite" "${quick[@]}" --runtime "$runtime" --out "$out/suite" --quiet
suite_rc=$?
case "$suite_rc" in
  0) note "Suite \`$suite\`: every run passed." ;;
  1) note "Suite \`$suite\`: a run's threshold failed (see suite.md)." ;;
  2) say "the suite file or a cell is bad input"; exit 2 ;;
  4) note "Suite \`$suite\`: **a run is suspect**: its own cross-checks disagree (see suite.md and its report.md)." ;;
  *) note "Suite \`$suite\`: **a run or the suite failed** (exit $suite_rc)." ;;
esac
[[ -f "$out/suite/suite.md" ]] && note "" && note "$(cat "$out/suite/suite.md")"

compare_rc=0
if [[ -n "$baseline" && -f "$baseline/suite.json" ]]; then
  say "comparing with $baseline"
  node bin/run.js compare "$baseline" "$out/suite" --benchmark-json "$out/benchmark.json" >"$out/compare.md"
  compare_rc=$?
  # compare wrote its table to $GITHUB_STEP_SUMMARY itself.
  cat "$out/compare.md" >>"$summary"
  [[ "$compare_rc" == 2 ]] && { say "the baseline could not be read"; exit 2; }
  [[ "$compare_rc" == 4 ]] && note "Not compared: a side holds a suspect run."

else
  note "No baseline (a first night, or the previous night's outputs are gone): nothing compared."
fi

if [[ "$suite_rc" == 3 || "$suite_rc" -gt 4 ]]; then exit 3; fi
if [[ "$suite_rc" == 4 || "$compare_rc" == 4 ]]; then exit 4; fi
if [[ "$compare_rc" == 1 || "$suite_rc" == 1 ]]; then exit 1; fi
exit 0
