#!/usr/bin/env bash
# The main job: set-up, build, then the identity gate on the default matrix
# (synthetic checkpoints x scenarios x configurations, and the real
# checkpoints of ../shared/checkpoints with the scenarios that fit them, as
# scenarios/real/suite.json pairs them; UNSUPPORTED where the files are
# absent) against the committed references, writing reports/latest.html and
# reports/latest.md.
#
# Every cell runs under both dot-product profiles for quantized weights
# (--quant-dot exact,int8): the int8 cells are judged among themselves and
# against references/portable-int8.txt, never against the exact ones. On
# every checkpoint, not only the quantized ones: on F32, F16 and BF16
# weights the int8 profile must leave the bits alone, which its references
# (equal to portable.txt's there) hold it to; that costs a few seconds over
# the quantized checkpoints alone (BENCHMARKS.md, "The default gate: cells
# and wall time"). A --quant-dot given to this script replaces the pair.
#
# It builds only what it runs: the harness and the engine its cells start
# (engines/samebits.json's command), not the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh samebits samebits-engine
profiles=(--quant-dot "exact,int8")
for arg in "$@"; do
  [[ $arg == --quant-dot || $arg == --quant-dot=* ]] && profiles=()
done
exec build/bin/samebits gate "${profiles[@]}" --report-html reports/latest.html \
  --report-md reports/latest.md "$@"
