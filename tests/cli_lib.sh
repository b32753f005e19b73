# Shared by the command-line suites tests/test_cli*.sh, which meson runs as
#   SCRIPT <path-to-drivegraph> <source-root>
# Source it right after `set -euo pipefail`. It sets DG, ROOT and a TMP
# directory removed on exit, and defines `run` / `check` and small
# predicates. End the script with `finish`, which prints the closing line
# "N passed, M failed" and fails when any check failed.

if [[ $# -lt 2 ]]; then
  echo "usage: $0 <path-to-drivegraph> <source-root>" >&2
  exit 2
fi
DG=$1
ROOT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0

# run CMD...: runs without stopping the script; sets OUT, ERR and RC.
run() {
  set +e
  "$@" >"$TMP/stdout" 2>"$TMP/stderr"
  RC=$?
  set -e
  OUT=$(cat "$TMP/stdout")
  ERR=$(cat "$TMP/stderr")
}

# check NAME CONDITION...: one check; passes when CONDITION succeeds. On a
# failure the output of the last `run` is shown.
check() {
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok - $name"
  else
    failed=$((failed + 1))
    echo "FAIL - $name (exit ${RC:-?})"
    echo "  condition: $*"
    sed 's/^/  stdout: /' "$TMP/stdout" 2>/dev/null | head -n 40 || true
    sed 's/^/  stderr: /' "$TMP/stderr" 2>/dev/null | head -n 40 || true
  fi
}

rc_is() { [[ $RC -eq $1 ]]; }
# has TEXT REGEX: some line of TEXT matches the extended regex.
has() { grep -Eq -- "$2" <<<"$1"; }
lacks() { ! grep -Eq -- "$2" <<<"$1"; }
has_fixed() { grep -Fq -- "$2" <<<"$1"; }
all_lines_match() { [[ -n $1 ]] && ! grep -Evq -- "$2" <<<"$1"; }
lines_of() { if [[ -z $1 ]]; then echo 0; else wc -l <<<"$1" | tr -d ' '; fi; }
line_count_is() { [[ $(lines_of "$1") -eq $2 ]]; }
# Escapes a string for use inside an extended regex.
re() { sed 's/[][\.*^$+?(){}|/]/\\&/g' <<<"$1"; }
no_file() { [[ ! -e $1 ]]; }
same_file() { cmp -s "$1" "$2"; }
is_empty() { [[ -z $1 ]]; }

finish() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}

# find_retarder_plugin: sets PLUGIN to the built example plugin
# examples/retarder (next to the drivegraph binary; DG_RETARDER_PLUGIN
# overrides), or to "" when it is not built.
find_retarder_plugin() {
  local bin_dir c
  bin_dir=$(cd "$(dirname "$DG")" && pwd)
  PLUGIN=
  for c in ${DG_RETARDER_PLUGIN:-} "$bin_dir/examples/retarder/libretarder.so" "$bin_dir/libretarder.so"; do
    if [[ -f $c ]]; then
      PLUGIN=$c
      return 0
    fi
  done
}
