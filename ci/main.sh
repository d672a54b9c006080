#!/usr/bin/env bash
# The main job: set-up, build, then the identity gate on the default matrix
# (synthetic checkpoints x scenarios x configurations, and the real
# checkpoints of ../shared/checkpoints with the scenarios that fit them, as
# scenarios/real/suite.json pairs them; UNSUPPORTED where the files are
# absent) against the committed references, writing reports/latest.html and
# reports/latest.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
exec build/bin/samebits gate --report-html reports/latest.html --report-md reports/latest.md "$@"
