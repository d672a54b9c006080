#!/usr/bin/env bash
# Runs a command with its output kept in a file, shown only when it fails:
# a CI log keeps only its tail, and apt's and dpkg's hundreds of lines
# buried what came before them.
#
#   ci/quietly.sh COMMAND [ARG...]   exit status: the command's
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1
status=$?
((status == 0)) || cat "$log" >&2
exit $status
