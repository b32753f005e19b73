#!/usr/bin/env bash
# Which C files clang-format would change under the repository's
# .clang-format, and how many of their lines: a report, not a gate. Nothing
# is rewritten and CI does not run it; the tree has not been reformatted
# wholesale (that would collide with every open branch), so reformat a file
# when you are rewriting it anyway (clang-format -i FILE).
#
#   scripts/format-check.sh [-d] [FILE...]
#
# Without FILEs: every tracked .c and .h file. -d also prints the diffs.
# Prints one line per file that would change ("N lines  FILE") and a
# total ("N of M lines (P %) in F of G files would change"). Exit status:
# 0 when no file would change, 1 when some would, 2 on a usage error or
# without clang-format (CLANG_FORMAT names another binary).
set -euo pipefail

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
show_diff=false
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
  exit 0
fi
if [[ ${1:-} == -d ]]; then
  show_diff=true
  shift
fi
if ! command -v "$CLANG_FORMAT" >/dev/null; then
  echo "format-check: $CLANG_FORMAT not found (Debian: apt-get install clang-format)" >&2
  exit 2
fi

cd "$(dirname "$0")/.."
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.c' '*.h')
fi

total=0
changed=0
nfiles=0
ndiffer=0
for f in "${files[@]}"; do
  if [[ ! -f $f ]]; then
    echo "format-check: $f: no such file" >&2
    exit 2
  fi
  lines=$(wc -l <"$f")
  total=$((total + lines))
  nfiles=$((nfiles + 1))
  # -U0: a changed line is a line of FILE the formatted text drops ("-")
  d=$("$CLANG_FORMAT" --style=file --assume-filename="$f" <"$f" | diff -U0 "$f" - || true)
  [[ -z $d ]] && continue
  n=$(tail -n +3 <<<"$d" | grep -c '^-' || true) # after the two header lines
  changed=$((changed + n))
  ndiffer=$((ndiffer + 1))
  printf '%5d lines  %s\n' "$n" "$f"
  if $show_diff; then
    printf '%s\n' "$d"
  fi
done
pct=$(awk -v c="$changed" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * c / t : 0 }')
echo "$changed of $total lines ($pct %) in $ndiffer of $nfiles files would change"
[[ $ndiffer -eq 0 ]]
