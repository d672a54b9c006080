# Sourced by the card scripts (ci/card-llamacpp.sh, ci/card-pytorch.sh,
# ci/card-pytorch-cuda.sh): read_card_args reads their arguments, [BUILD_DIR] [--short] [--out PREFIX]
# [-h], into `build`, `short` and `out`; --help prints the calling script's
# header comment (its lines from the second to `set -euo pipefail`).
read_card_args() {
  build=build short=0 out=''
  while (($#)); do
    case $1 in
      --short) short=1; shift ;;
      --out)
        (($# >= 2)) || { echo "$0: --out needs a PREFIX" >&2; exit 2; }
        out=$2
        shift 2
        ;;
      -h | --help)
        sed -n '2,/^set -euo pipefail/{/^set -euo pipefail/!p}' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
      -*) echo "$0: unknown argument '$1' (see --help)" >&2; exit 2 ;;
      *) build=$1; shift ;;
    esac
  done
}

# add_shared_checkpoints FILE...: appends gguf:../shared/checkpoints/FILE to
# the caller's `checkpoints` array for each FILE, or exits 2 naming the first
# one missing (the cards are made from the shared files, never without them).
add_shared_checkpoints() {
  local shared=../shared/checkpoints file
  for file in "$@"; do
    [[ -f $shared/$file ]] || { echo "$0: $shared/$file is missing" >&2; exit 2; }
    checkpoints+=("gguf:$shared/$file")
  done
}
