#!/usr/bin/env bash
# Tests of drivegraph-bench-modes (bench/modes.c): a switch into a visited
# mode with the mode cache and built in full. Run by meson as
#   test_bench_modes.sh <path-to-drivegraph-bench-modes> <source-root>
# Timings are not asserted (the machine may be busy); what is asserted is
# the shape of the report and the counts: two clutches under sine
# engagements return to modes they visited, and the numbers are numbers.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

NUM='[0-9]+\.[0-9]+'

run "$DG" --help
check "--help: exit 0" rc_is 0
check "--help: usage" has "$OUT" '^usage: drivegraph-bench-modes GRAPH \[STEPS\]$'
run "$DG"
check "without a graph: exit 2" rc_is 2
check "without a graph: message" has "$ERR" '^drivegraph-bench-modes: no graph file given$'
run "$DG" a.json 10 more
check "too many arguments: exit 2" rc_is 2
run "$DG" "$ROOT/graphs/dct.json" 12x
check "bad STEPS: exit 2" rc_is 2
check "bad STEPS: message" has "$ERR" "STEPS: expected a whole number from 0 to 1e8 \(got '12x'\)"
run "$DG" "$TMP/none.json"
check "missing file: exit 1" rc_is 1
check "missing file: named" has "$ERR" 'none.json'

python3 "$ROOT/scripts/switches.py" --write-graphs "$TMP/sw" --max-n 2
run "$DG" "$TMP/sw/clutches_2_sine.json" 5000
check "two clutches: exit 0" rc_is 0
check "two clutches: the run's mode changes" has "$OUT" \
  '^.*clutches_2_sine.json: 5000 steps, [0-9]+ mode changes: [1-9][0-9]* from the cache, [0-9]+ built$'
check "two clutches: the switch timed both ways" has "$OUT" \
  "^a switch into a visited mode: $NUM us with the cache, $NUM us built \(ratio $NUM\)$"
finish
