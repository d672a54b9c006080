# shellcheck shell=bash
# Shared by the timing scripts (ci/compare-llamacpp.sh, ci/bench-types.sh):
# source it after setting `script` to the caller's name for messages.
# shellcheck disable=SC2154  # `script` is the caller's

# Exits 2 unless $2 (named $1) is a positive whole number.
require_positive() {
  [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "$script: $1 takes a positive whole number" >&2; exit 2; }
}
# Exits 2 unless $2 (named $1) is a comma-separated list of positive numbers.
require_number_list() {
  [[ $2 =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "$script: $1 takes N,N,..." >&2; exit 2; }
}
# The preflight: refuses a machine whose load average is above half its
# cores (figures taken beside other work understate what is timed, and not
# everything by as much) unless $1 is 1 (--force), which only warns. Sets
# `cores` and `load` for the report.
refuse_busy_machine() {
  cores=$(nproc)
  load=$(cut -d' ' -f1 /proc/loadavg)
  if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > 0.5 * c) }'; then
    local msg="load average $load on $cores cores: other work is running and would slow what is timed"
    if (($1)); then echo "$script: warning: $msg (--force given)" >&2
    else echo "$script: $msg; stop it and run again, or pass --force" >&2; exit 2; fi
  fi
}
# Prints the median of the numbers on stdin, one per line.
median() {
  sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
