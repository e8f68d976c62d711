#!/usr/bin/env bash
# The corpus that the fuzzing runs of `mvn verify` grow (conformance-tests/FUZZING.md), kept where the
# next run and the repository see it. Jazzer writes each new input of a run into
# <module>/.cifuzz-corpus/<class>/<method>/ and starts the next run of that target from it and from
# the committed seeds (src/test/resources/<package>/<Class>Inputs/<method>/).
#
#   fuzz-corpus.sh link     make each fuzzing module's .cifuzz-corpus a link to a folder outside the
#                           clone, $JIWARP_FUZZ_CORPUS/<module> (default ~/.cache/jiwarp-fuzz-corpus),
#                           so that the next build on this machine, in another clone, starts from what
#                           this one found; .ci/run does this before the tests (what a real folder
#                           there holds is moved into the cache first)
#   fuzz-corpus.sh status   count the inputs there that no committed seed holds, per target
#   fuzz-corpus.sh keep     copy those inputs into the committed seed folders as fuzz-<sha1> (the name
#                           libFuzzer gave them); the normal test phase replays them from then on:
#                           review them, run the module's tests, and commit them
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${JIWARP_FUZZ_CORPUS:-${HOME:-/tmp}/.cache/jiwarp-fuzz-corpus}
MODULES=(capture conformance-tests)

usage() {
  sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

link() {
  for module in "${MODULES[@]}"; do
    local here="$ROOT/$module/.cifuzz-corpus" there="$CACHE/$module"
    mkdir -p "$there"
    if [ -d "$here" ] && [ ! -L "$here" ]; then
      cp -rn "$here/." "$there/"
      rm -rf "$here"
    fi
    ln -sfn "$there" "$here"
    echo "fuzz-corpus: $module/.cifuzz-corpus -> $there ($(find "$there" -type f | wc -l) inputs)"
  done
}

# Prints "<target> <new inputs>" per target and, with keep=1, copies the new inputs.
walk() {
  local keep=$1 total=0
  for module in "${MODULES[@]}"; do
    local corpus="$ROOT/$module/.cifuzz-corpus"
    [ -d "$corpus" ] || corpus="$CACHE/$module"
    [ -d "$corpus" ] || continue
    for dir in "$corpus"/*/*/; do
      [ -d "$dir" ] || continue
      local method class package simple seeds
      method=$(basename "$dir")
      class=$(basename "$(dirname "$dir")")
      package=${class%.*}
      simple=${class##*.}
      seeds="$ROOT/$module/src/test/resources/${package//.//}/${simple}Inputs/$method"
      if [ ! -d "$seeds" ]; then
        echo "fuzz-corpus: $simple#$method has no seed folder ($seeds): skipped" >&2
        continue
      fi
      local known new=0
      known=$(find "$seeds" -type f -exec sha1sum {} + | cut -d' ' -f1 | sort -u)
      while IFS= read -r -d '' input; do
        local sum
        sum=$(sha1sum "$input" | cut -d' ' -f1)
        if ! grep -qx "$sum" <<<"$known"; then
          new=$((new + 1))
          if [ "$keep" = 1 ]; then
            cp "$input" "$seeds/fuzz-$sum"
            known=$(printf '%s\n%s' "$known" "$sum")
          fi
        fi
      done < <(find "$dir" -maxdepth 1 -type f -print0)
      echo "$simple#$method: $new input(s) not committed$([ "$keep" = 1 ] && [ "$new" -gt 0 ] && echo ", copied to ${seeds#"$ROOT"/}")"
      total=$((total + new))
    done
  done
  echo "fuzz-corpus: $total input(s) not committed$([ "$keep" = 1 ] && echo " before this run: now copied, review and commit them")"
}

case "${1:-}" in
  link) link ;;
  status) walk 0 ;;
  keep) walk 1 ;;
  *) usage ;;
esac
