#!/usr/bin/env bash
# Installs the Debian 12 packages samebits builds and tests with, when they
# are missing. Safe to run again: it installs nothing when all are present.
#
#   ci/install-deps.sh [--browser]
#     --browser  also Debian's chromium, for ci/browser-check.sh (headless
#                Chromium opens the HTML reports; about 30 s and 300 MB,
#                which the README's two commands do not need)
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
for argument in "$@"; do
  case $argument in
    --browser) packages+=(chromium) ;;
    *)
      echo "usage: ci/install-deps.sh [--browser]" >&2
      exit 2
      ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ci/install-deps.sh: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  start=$SECONDS
  quietly=$(dirname "$0")/quietly.sh
  if ! { bash "$quietly" "${sudo_cmd[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive bash "$quietly" "${sudo_cmd[@]}" apt-get install -y -qq \
      --no-install-recommends "${missing[@]}"; }; then
    echo "ci/install-deps.sh: apt-get could not install ${missing[*]}" >&2
    exit 1
  fi
  echo "ci/install-deps.sh: installed in $((SECONDS - start)) s" >&2
fi
