#!/usr/bin/env bash
# Tests of drivegraph-bench-floor (bench/floor.c): the framework's step
# against the same step written out for the mode, hooks kept. Run by meson as
#   test_bench_floor.sh <path-to-drivegraph-bench-floor> <source-root>
# Timings are not asserted (the machine may be busy); what is asserted is
# that the written-out step agrees with dg_sim_step to the bit on the axle
# (exit 0; 3 would be a disagreement), the shape of the report, and the
# refusals.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

NUM='[0-9]+'

run "$DG" --help
check "--help: exit 0" rc_is 0
check "--help: usage" has "$OUT" '^usage: drivegraph-bench-floor GRAPH \[STEPS\]$'
run "$DG"
check "without a graph: exit 2" rc_is 2
check "without a graph: message" has "$ERR" '^drivegraph-bench-floor: no graph file given$'
run "$DG" a.json 10 more
check "too many arguments: exit 2" rc_is 2
run "$DG" "$ROOT/graphs/bench/axle_baseline.json" 12x
check "bad STEPS: exit 2" rc_is 2
check "bad STEPS: message" has "$ERR" "STEPS: expected a whole number 1 to 1e8, got '12x'"
run "$DG" "$TMP/none.json"
check "missing file: exit 1" rc_is 1
check "missing file: named" has "$ERR" 'none.json'
run "$DG" "$ROOT/graphs/bench/sedan_baseline.json" 100
check "the sedan (states, lossy meshes): not covered, exit 1" rc_is 1
check "the sedan: why" has "$ERR" 'sedan_baseline.json: not covered: (its mode|it has) '

run "$DG" "$ROOT/graphs/bench/axle_baseline.json" 2000
check "axle: exit 0 (the two steps agree to the bit)" rc_is 0
check "axle: the graph" has "$OUT" '^graph: .*axle_baseline.json \(2 DOFs, 5 nodes, 3 torque hooks\)$'
check "axle: framework" has "$OUT" "^framework: +$NUM ns per step \(median of 7, 2000 steps\)$"
check "axle: floor" has "$OUT" "^floor: +$NUM ns per step"
check "axle: ratio" has "$OUT" '^framework/floor: +[0-9]+\.[0-9]+$'
finish
