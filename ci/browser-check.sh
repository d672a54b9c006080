#!/usr/bin/env bash
# Opens samebits' HTML reports in a real browser (headless Chromium,
# Debian's `chromium`) and fails when one logs anything to its console, lacks
# its "At a glance" grid or its verdict, or loads anything from outside the
# page (a report is one self-contained file: no script, no network):
#
#   ci/browser-check.sh [BUILD_DIR]     (default: build)
#
# The pages, made fresh by BUILD_DIR's samebits:
#   pass   a gate of synthetic:tiny (reference, cpu-t2) against references/
#   fail   the same gate against a copy of references/ with one hash changed
#   card   reports/cards/samebits.html, the committed card, when present
#   conform  tests/harness/golden/conformance.html, a conform report with its
#          per-step charts (inline SVG; the golden test keeps it what the
#          exporter writes today)
# Each page's screenshot (PNG), DOM and browser log are kept under
# BUILD_DIR/browser-check/ (CI's artifacts). The checker first proves it can
# fail: a page with a console error and no grid must be refused, or the
# run stops (exit 1) before any report is judged.
#
# Exit 0: every page passed; 1: a page failed (each failure named); 2: no
# browser or no samebits build. CHROMIUM names another browser binary.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
browser=${CHROMIUM:-chromium}
samebits=$build/bin/samebits
if ! command -v "$browser" >/dev/null; then
  echo "ci/browser-check.sh: no '$browser' here: install Debian's chromium" \
    "(ci/install-deps.sh --browser) or name one with CHROMIUM" >&2
  exit 2
fi
if [[ ! -x $samebits ]]; then
  echo "ci/browser-check.sh: no $samebits: build first (cmake --build $build)" >&2
  exit 2
fi
out=$build/browser-check
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs the browser headless on PAGE with ARGS; its log goes to LOG. The
# sandbox needs user namespaces that CI's containers lack, a container's
# /dev/shm may be too small for it, and there is no
# display or GPU: the flags say so. A browser that hangs is stopped.
browse() {
  local page=$1 log=$2
  shift 2
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --user-data-dir="$work/profile" --enable-logging=stderr --log-level=0 \
    --window-size=1280,1600 "$@" "file://$page" 2>>"$log"
}

# Checks one page; prints what is wrong with it and returns 1, or 0.
# VERDICT: text the page must contain ("" for none); MARK: the element that
# must be drawn (default the grid).
check_page() {
  local name=$1 page=$2 verdict=$3 mark=${4:-<table class=\"grid\">}
  local dom=$out/$name.dom.html log=$out/$name.log png=$out/$name.png problems=()
  : >"$log"
  browse "$page" "$log" --dump-dom >"$dom" || problems+=("the browser failed on it (exit $?)")
  browse "$page" "$log" --screenshot="$png" >/dev/null || problems+=("no screenshot (exit $?)")
  # Chromium logs each console message, errors and uncaught exceptions
  # among them, as INFO:CONSOLE; a report has no script, so any is wrong.
  if grep -q ':CONSOLE' "$log"; then
    problems+=("console: $(grep ':CONSOLE' "$log" | head -3 | sed 's/^.*:CONSOLE[^]]*\] //' | tr '\n' ' ')")
  fi
  grep -qF "$mark" "$dom" || problems+=("no $mark")
  if [[ -n $verdict ]] && ! grep -qF "$verdict" "$dom"; then
    problems+=("no verdict '$verdict'")
  fi
  if grep -qiE '<script|(src|href)="(https?:)?//' "$dom"; then
    problems+=("not self-contained: $(grep -oiE '<script[^>]*>|(src|href)="(https?:)?//[^"]*"' "$dom" | head -2 | tr '\n' ' ')")
  fi
  if [[ ! -s $png ]] || [[ $(head -c 4 "$png" | od -An -c | tr -d ' ') != '211PNG' ]]; then
    problems+=("the screenshot $png is not a PNG")
  fi
  if ((${#problems[@]})); then
    printf 'ci/browser-check.sh: %s (%s): %s\n' "$name" "$page" "${problems[0]}" >&2
    local p
    for p in "${problems[@]:1}"; do printf '  also: %s\n' "$p" >&2; done
    return 1
  fi
  echo "   $name: no console message, $mark and verdict present, self-contained; $png"
}

echo "== browser: $("$browser" --version 2>/dev/null | head -1)"
# The negative control: a page the checker must refuse.
printf '<html><body><p>samebits run 1: PASS</p><script>console.error("planted");</script></body></html>\n' \
  >"$work/planted.html"
if check_page control "$work/planted.html" "PASS" 2>"$work/control.err"; then
  echo "ci/browser-check.sh: the checker passed a page with a console error and no grid:" \
    "it cannot see a broken report" >&2
  exit 1
fi
if ! grep -q 'console: "planted"' "$work/control.err" ||
  ! grep -q 'no <table class="grid">' "$work/control.err"; then
  echo "ci/browser-check.sh: the checker refused the planted page, but not for its console" \
    "error and missing grid:" >&2
  cat "$work/control.err" >&2
  exit 1
fi
echo "   control: a page with a console error and no grid is refused"

# A passing and a failing gate, each reported as HTML.
selection=(--checkpoint synthetic:tiny --config reference,cpu-t2 --db "$work/runs.db")
"$samebits" gate "${selection[@]}" >"$work/pass.txt" 2>&1 || {
  cat "$work/pass.txt" >&2
  echo "ci/browser-check.sh: the passing gate did not pass" >&2
  exit 1
}
"$samebits" report latest --db "$work/runs.db" -o "$work/pass.html"
cp -r references "$work/references"
# One hash of the first data line changed: the gate must fail on it.
awk 'BEGIN { done = 0 }
     !done && $1 == "synthetic:tiny" { $NF = ($NF ~ /^0/ ? "1" : "0") substr($NF, 2); done = 1 }
     { print }' references/portable.txt >"$work/references/portable.txt"
if "$samebits" gate "${selection[@]}" --references-dir "$work/references" >"$work/fail.txt" 2>&1; then
  echo "ci/browser-check.sh: the gate against a changed reference passed" >&2
  exit 1
fi
"$samebits" report latest --db "$work/runs.db" -o "$work/fail.html"

status=0
check_page pass "$work/pass.html" ": PASS" || status=1
check_page fail "$work/fail.html" ": FAIL" || status=1
if [[ -f reports/cards/samebits.html ]]; then
  check_page card "$PWD/reports/cards/samebits.html" "" || status=1
fi
check_page conform "$PWD/tests/harness/golden/conformance.html" "" "<svg" || status=1
cp "$work/pass.html" "$work/fail.html" "$out/"
exit $status
