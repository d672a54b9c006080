#!/usr/bin/env bash
# Runs CMD... beside a throwaway PostgreSQL cluster, for the store's tests on
# both backends:
#
#   ci/with-postgres.sh ctest --test-dir build -R Store -j2 --output-on-failure
#
# The cluster is made with initdb in a fresh temporary folder, listens on a
# Unix socket there only (no TCP port), runs as an unprivileged user
# (PostgreSQL refuses root: `postgres` when it exists, else `nobody`), and
# is always stopped and removed, whatever CMD does. CMD sees:
#   SAMEBITS_TEST_PG          the server, as a libpq keyword string
#   SAMEBITS_REQUIRE_PG=1     the store tests' PostgreSQL instances fail
#                             instead of being skipped when they cannot run
#   SAMEBITS_TEST_PG_RESTART  a command that restarts the server (the
#                             faults test restarts it under the writers)
# Exits with CMD's status, or 2 when the cluster cannot be started.
set -euo pipefail

if (($# == 0)); then
  echo "usage: ci/with-postgres.sh CMD [ARG...]" >&2
  exit 2
fi
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
  echo "ci/with-postgres.sh: no PostgreSQL server found under /usr/lib/postgresql (apt-get install postgresql)" >&2
  exit 2
fi

folder=$(mktemp -d /tmp/samebits-pg.XXXXXX)
chmod 755 "$folder"
as_owner=()
if [[ $(id -u) -eq 0 ]]; then
  owner=postgres
  id -u "$owner" >/dev/null 2>&1 || owner=nobody
  chown "$owner" "$folder"
  as_owner=(runuser -u "$owner" --)
fi
data="$folder/data"
log="$folder/server.log"
pg_ctl=("${as_owner[@]}" "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60)
# No TCP at all; the socket lives in the cluster's folder. fsync off: the
# cluster is thrown away (a crash of the machine is not what is tested).
server_options="-c listen_addresses= -c unix_socket_directories=$folder -c fsync=off -c full_page_writes=off -c max_connections=200"

stop() {
  "${pg_ctl[@]}" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$folder"
}
trap stop EXIT

if ! "${as_owner[@]}" "$bin/initdb" -D "$data" -U samebits -A trust -E UTF8 --locale=C \
    --no-sync >"$folder/initdb.log" 2>&1; then
  cat "$folder/initdb.log" >&2
  echo "ci/with-postgres.sh: initdb failed" >&2
  exit 2
fi
if ! "${pg_ctl[@]}" -o "$server_options" start >/dev/null; then
  cat "$log" >&2
  echo "ci/with-postgres.sh: the server did not start" >&2
  exit 2
fi

export SAMEBITS_TEST_PG="host=$folder user=samebits dbname=postgres"
export SAMEBITS_REQUIRE_PG=1
printf -v SAMEBITS_TEST_PG_RESTART '%q ' "${pg_ctl[@]}" -m fast -o "$server_options" restart
export SAMEBITS_TEST_PG_RESTART
echo "ci/with-postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $folder (Unix socket only)" >&2

status=0
"$@" || status=$?
exit "$status"
