#!/usr/bin/env bash
# Determinism: the same graph, scenario and dt give bit-identical output
# across runs and across the static and the shared library. Run by meson as
#   test_determinism.sh <det_run (static)> <det_run_shared> <source-root>
# det_run (tests/det_run.c) writes every signal at every output interval
# with %.17g, so equal text means equal doubles to the last bit.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 <det_run> <det_run_shared> <source-root>" >&2
  exit 2
fi
STATIC=$1
SHARED=$2
ROOT=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0
check() {
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok - $name"
  else
    failed=$((failed + 1))
    echo "FAIL - $name"
  fi
}

# The example graphs with their scenarios (docs/graphs.md, "Example graphs").
pairs=(
  "sedan_rwd_automatic launch"
  "hatchback_fwd_manual manual_launch"
  "awd_lsd launch"
  "ev_single_speed ev_launch_brake"
  "gear_train gear_train_pulse"
  "open_diff_axle open_diff_spinup"
)
for pair in "${pairs[@]}"; do
  read -r graph scenario <<<"$pair"
  g=$ROOT/graphs/$graph.json
  s=$ROOT/graphs/scenarios/$scenario.json
  if [[ ! -f $g || ! -f $s ]]; then
    echo "skip - $graph with $scenario (file missing)"
    continue
  fi
  ok=true
  "$STATIC" "$g" "$s" 0.001 "$TMP/$graph.a.csv" || ok=false
  "$STATIC" "$g" "$s" 0.001 "$TMP/$graph.b.csv" || ok=false
  "$SHARED" "$g" "$s" 0.001 "$TMP/$graph.c.csv" || ok=false
  check "$graph with $scenario runs (static and shared)" $ok
  rows=$(wc -l <"$TMP/$graph.a.csv")
  check "$graph: $rows rows written" test "$rows" -gt 10
  check "$graph: run twice, bit-identical" cmp -s "$TMP/$graph.a.csv" "$TMP/$graph.b.csv"
  check "$graph: static and shared library, bit-identical" \
    cmp -s "$TMP/$graph.a.csv" "$TMP/$graph.c.csv"
done

# The comparison can see a difference: half the step size changes the
# values (RK4's error), so the files differ.
g=$ROOT/graphs/sedan_rwd_automatic.json
s=$ROOT/graphs/scenarios/launch.json
if [[ -f $g && -f $s ]]; then
  "$STATIC" "$g" "$s" 0.0005 "$TMP/half.csv" || true
  check "a different dt gives a different output" \
    bash -c "! cmp -s '$TMP/sedan_rwd_automatic.a.csv' '$TMP/half.csv'"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
