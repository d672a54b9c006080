#!/usr/bin/env bash
# Installs the Debian 12 packages samebits builds and tests with, when they
# are missing. Safe to run again: it installs nothing when all are present.
set -euo pipefail
packages=(
  build-essential cmake git pkg-config ccache
  libgtest-dev libgmock-dev
  libxxhash-dev libsqlite3-dev sqlite3
  nlohmann-json3-dev libcli11-dev
  libboost-dev libboost-filesystem-dev
  clang-format clang-tidy
  libpcre2-dev
  libsodium-dev  # signed bundles: HMAC-SHA256 (harness/exchange/bundle_signature.h)
  libpq-dev  # the PostgreSQL store (harness/store/postgres.h)
  postgresql  # a throwaway server for the store's tests (ci/with-postgres.sh)
  python3  # the minimal adapter (adapters/minimal-python), gated by a ctest
  python3-torch python3-numpy  # the PyTorch adapter (adapters/pytorch), gated by a ctest
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ci/install-deps.sh: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  # dpkg's hundreds of lines go to a file, shown only when the install
  # fails: a CI log keeps only its tail.
  apt_log=$(mktemp)
  trap 'rm -f "$apt_log"' EXIT
  start=$SECONDS
  if ! { "${sudo_cmd[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
      --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1; then
    cat "$apt_log" >&2
    echo "ci/install-deps.sh: apt-get could not install ${missing[*]}" >&2
    exit 1
  fi
  echo "ci/install-deps.sh: installed in $((SECONDS - start)) s" >&2
fi
