#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz for a given time each.
#
#   scripts/fuzz.sh [-t SECONDS] [-j JOBS] [-b BUILD_DIR] [TARGET...]
#
# Sets up BUILD_DIR (default build-fuzz) with CC=clang -Dfuzz=true if needed,
# builds, then runs each TARGET (default: every fuzz_* binary built) for
# SECONDS (default 60), JOBS targets at a time (default 1). Each target runs
# on its corpus:
#   BUILD_DIR/corpus/TARGET      the working corpus: grows, kept between runs
#   tests/fuzz/corpus/TARGET     checked-in seeds and past crashes (read only)
#   graphs/, tests/data/...      the example files (read only, see meson.build)
# Crashes, leaks, timeouts and out-of-memory inputs are written to
# BUILD_DIR/crashes/TARGET/; copy each into tests/fuzz/corpus/TARGET/ once
# fixed, where the replay test keeps it fixed. Logs: BUILD_DIR/logs/TARGET.log.
#
# Prints per target: executions, exec/s, coverage (libFuzzer's cov: edges
# and ft: features), corpus size and crashes; exits 1 if any target found a
# crash (or did not run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=60
jobs=1
build=build-fuzz
usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit "$1"
}
while getopts ":t:j:b:h" opt; do
  case $opt in
  t) seconds=$OPTARG ;;
  j) jobs=$OPTARG ;;
  b) build=$OPTARG ;;
  h) usage 0 ;;
  *) echo "fuzz.sh: bad option -$OPTARG" >&2; usage 2 >&2 ;;
  esac
done
shift $((OPTIND - 1))
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: -t needs whole seconds" >&2; exit 2 ;; esac
case $jobs in ''|*[!0-9]*|0) echo "fuzz.sh: -j needs a positive number" >&2; exit 2 ;; esac

command -v clang >/dev/null || { echo "fuzz.sh: clang not found (make deps installs it)" >&2; exit 2; }
if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" -Dfuzz=true -Db_lundef=false >/dev/null
elif ! grep -q "fuzz_graph:" "$build/build.ninja" 2>/dev/null; then
  meson configure "$build" -Dfuzz=true >/dev/null
fi
# Only the fuzz binaries (the rest of the build is `make test`'s business).
if [ $# -eq 0 ]; then
  set -- $(ninja -C "$build" -t targets all | sed -n 's|^tests/fuzz/\(fuzz_[a-z_]*\): .*|\1|p' |
    grep -v '_replay$' | sort -u)
fi
[ $# -gt 0 ] || { echo "fuzz.sh: no fuzz targets in $build (is -Dfuzz=true set?)" >&2; exit 2; }
ninja -C "$build" $(printf 'tests/fuzz/%s ' "$@") >/dev/null

# Read-only seed directories of a target (as in tests/fuzz/meson.build).
seeds() {
  case $1 in
  fuzz_graph | fuzz_bind) echo "graphs tests/data/invalid" ;;
  fuzz_scenario) echo "graphs/scenarios" ;;
  fuzz_yaml) echo "tests/data/yaml" ;;
  fuzz_chrono) echo "tests/data/chrono" ;;
  fuzz_fastsim) echo "tests/data/fastsim" ;;
  fuzz_cycle) echo "data/cycles" ;;
  *) echo "" ;;
  esac
}
# Largest input: text formats get room, the driver program needs little.
max_len() {
  case $1 in
  fuzz_drive) echo 1024 ;;
  *) echo 65536 ;;
  esac
}

mkdir -p "$build/logs"
run_one() {
  local t=$1 bin="$build/tests/fuzz/$1"
  [ -x "$bin" ] || { echo "fuzz.sh: no target $t" >&2; return 1; }
  local work="$build/corpus/$t" crashes="$build/crashes/$t"
  mkdir -p "$work" "$crashes"
  local dirs=("$work" "tests/fuzz/corpus/$t")
  for s in $(seeds "$t"); do dirs+=("$s"); done
  local dict=()
  case $t in
  fuzz_graph|fuzz_scenario|fuzz_fmu) dict=(-dict=tests/fuzz/json.dict) ;;
  fuzz_yaml) dict=(-dict=tests/fuzz/yaml.dict) ;;
  fuzz_chrono) dict=(-dict=tests/fuzz/chrono.dict) ;;
  esac
  # -timeout: one input taking longer is a hang; -rss_limit_mb: a blow-up.
  # The global time limit is enforced twice (libFuzzer and timeout(1)), so
  # no step of CI can run away.
  DG_SOURCE_ROOT="$root" \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  timeout --kill-after=30 $((seconds + 120)) \
    "$bin" "${dict[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
      -max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$crashes/" \
      "${dirs[@]}" >"$build/logs/$t.log" 2>&1
}

# Runs up to $jobs targets at once; each writes its own log.
pids=()
names=()
status=()
for t in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
  echo "fuzz.sh: $t for ${seconds}s"
  run_one "$t" &
  pids+=($!)
  names+=("$t")
done
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then status[$i]=0; else status[$i]=$?; fi
done

printf '%-14s %12s %8s %7s %7s %8s %8s  %s\n' target execs exec/s cov ft corpus crashes result
failed=0
for i in "${!names[@]}"; do
  t=${names[$i]}
  log="$build/logs/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" 2>/dev/null | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" 2>/dev/null | tail -1)
  last=$({ grep -E '^#[0-9]+' "$log" 2>/dev/null || true; } |
    grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' | tail -1 || true)
  cov=$(echo "$last" | awk '{print $2}')
  ft=$(echo "$last" | awk '{print $4}')
  corp=$(echo "$last" | awk '{print $6}')
  ncrash=$(find "$build/crashes/$t" -type f ! -name 'slow-unit-*' | wc -l)
  result=ok
  if [ "${status[$i]}" -ne 0 ] || [ "$ncrash" -gt 0 ]; then
    result="FAILED (exit ${status[$i]}, see $log)"
    failed=1
  fi
  printf '%-14s %12s %8s %7s %7s %8s %8s  %s\n' "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" \
    "${ft:-?}" "${corp:-?}" "$ncrash" "$result"
done
exit $failed
