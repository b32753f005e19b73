#!/usr/bin/env bash
# Every source and test file in the tree is in the build: the lists in
# meson.build (core_modules, block_names, client_modules, tool_commands,
# tool_helpers), bench/meson.build, tests/meson.build and
# tests/fuzz/meson.build name them all.
# (A listed file that is missing is already a configure error; this is the
# other direction: a file added without adding it to its list.) Run by
# meson as
#   test_layout.sh <source-root> <listed file>...
# with the files the build uses, relative to the source root. Prints
# "N passed, M failed".
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 <source-root> <listed file>..." >&2
  exit 2
fi
ROOT=$1
shift
LISTED=$(printf '%s\n' "$@" | sort -u)

passed=0
failed=0

# check_listed WHAT LIST-NAME PATTERN...: every file matching a pattern
# (relative to the root) is listed.
check_listed() {
  local what=$1 list=$2 missing=""
  shift 2
  local f files
  files=$(cd "$ROOT" && for p in "$@"; do compgen -G "$p" || true; done)
  for f in $files; do
    grep -qxF -- "$f" <<<"$LISTED" || missing+="$f "
  done
  if [[ -z $missing ]]; then
    passed=$((passed + 1))
    echo "ok - every $what is in the build"
  else
    failed=$((failed + 1))
    echo "FAIL - every $what is in the build"
    for f in $missing; do
      echo "  not in the build: $f (add it to $list)"
    done
  fi
}

check_listed "lib/ source file" "core_modules or client_modules in meson.build" 'lib/*.c' 'lib/*/*.c'
check_listed "built-in block file" "block_names in meson.build" 'blocks/*.c'
check_listed "tool source file" "tool_commands or tool_helpers in meson.build" 'tools/*.c'
check_listed "bench program file" "bench/meson.build" 'bench/*.c'
check_listed "Check suite" "core_modules, block_names, client_modules (meson.build) or library_suites (tests/meson.build)" 'tests/test_*.c'
check_listed "test script" "tests/meson.build" 'tests/test_*.sh'
check_listed "fuzz target" "fuzz_targets in tests/fuzz/meson.build" 'tests/fuzz/fuzz_*.c'

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
