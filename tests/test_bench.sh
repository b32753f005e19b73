#!/usr/bin/env bash
# Tests of the bench program drivegraph-bench (bench/main.c): the framework
# against the hand-written baselines bench/baseline_sedan.c and
# baseline_axle.c on their graph twins. Run by meson as
#   test_bench.sh <path-to-drivegraph-bench> <source-root>
# Timings are not asserted (the machine may be busy); what is asserted is
# the shape of the report, the counts, and that each baseline's trajectory
# agrees with its twin's.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

SEDAN=$ROOT/graphs/bench/sedan_baseline.json
AXLE=$ROOT/graphs/bench/axle_baseline.json
TREE=$ROOT/graphs/bench/diff_tree_2.json
NUM='[0-9]+(\.[0-9]+)?'

# ---------------------------------------------------------------------------
# options

run "$DG" --help
check "--help: exit 0" rc_is 0
check "--help: usage" has "$OUT" '^usage: drivegraph-bench GRAPH \[--steps N\] \[--dt s\] \[--reps R\] \[--compile\]$'
check "--help: options" has "$OUT" '--steps N'
check "--help: the baseline" has "$OUT" 'sedan_baseline.json'
check "--help: the axle baseline" has "$OUT" 'axle_baseline.json'

run "$DG"
check "without a graph: exit 2" rc_is 2
check "without a graph: message" has "$ERR" '^drivegraph-bench: no graph file given$'
check "without a graph: where to look" has "$ERR" "^Try 'drivegraph-bench --help' for more information\.$"
run "$DG" "$SEDAN" "$AXLE"
check "two graphs: exit 2" rc_is 2
run "$DG" "$SEDAN" --steps 0
check "--steps 0: exit 2" rc_is 2
check "--steps 0: message" has "$ERR" "^drivegraph-bench: --steps: expected a whole number >= 1 \(got '0'\)$"
run "$DG" "$SEDAN" --reps 0
check "--reps 0: message" has "$ERR" "^drivegraph-bench: --reps: expected a whole number from 1 to 1000 \(got '0'\)$"
run "$DG" "$SEDAN" --dt -1
check "--dt -1: exit 2" rc_is 2
run "$DG" "$SEDAN" --plugin x.so
check "no --plugin: exit 2" rc_is 2
run "$DG" "$TMP/none.json"
check "missing file: exit 1" rc_is 1
check "missing file: named" has "$ERR" 'none.json: cannot read file'

# a graph that is no baseline's twin: refused before anything runs
run "$DG" "$TREE" --steps 200 --reps 1
check "no baseline: exit 1" rc_is 1
check "no baseline: message" has "$ERR" '^drivegraph-bench: .*diff_tree_2\.json: no hand-written baseline for the graph ".*"'
check "no baseline: nothing timed" is_empty "$OUT"

# ---------------------------------------------------------------------------
# the baselines

# the sedan's twin: 3 s of launch = one upshift = two topology changes
run "$DG" "$SEDAN" --steps 3000 --reps 3
check "sedan_baseline: exit 0" rc_is 0
check "sedan_baseline: graph line" has "$OUT" '^graph: +.*sedan_baseline.json \(9 blocks, 16 nodes, 5-6 DOFs\)$'
check "sedan_baseline: run line" has "$OUT" '^run: +launch, 3000 steps of 0.001 s \(3 s\), median of 3 after a warm-up run$'
check "sedan_baseline: topology changes" has "$OUT" '^topology changes: +2 per run$'
check "sedan_baseline: ns per step" has "$OUT" "^ns per step: +[0-9]+ median \(min [0-9]+, max [0-9]+\)$"
check "sedan_baseline: steps per second" has "$OUT" '^steps per second: +[0-9]+$'
check "sedan_baseline: real-time factor" has "$OUT" '^real-time factor: +[0-9]+ at dt = 0.001 s$'
check "sedan_baseline: the baseline agrees" has "$OUT" '^baseline: +[0-9]+ ns per step median .*same launch \(relative difference [0-9.e+-]+\)$'
check "sedan_baseline: the ratio" has "$OUT" "^framework/baseline: +$NUM$"
check "sedan_baseline: its own baseline" has "$OUT" 'hand-written bench/baseline_sedan\.c'
check "sedan_baseline: the paired ratio" has "$OUT" "^paired: +$NUM median of 3 rounds \(min $NUM, max $NUM\), each round one framework run and one baseline run, the order alternating$"

# the axle's twin: 2 DOFs, no mode change, its own baseline
run "$DG" "$AXLE" --steps 2000 --reps 3
check "axle_baseline: exit 0" rc_is 0
check "axle_baseline: graph line" has "$OUT" '^graph: +.*axle_baseline.json \(5 blocks, 5 nodes, 2 DOFs\)$'
check "axle_baseline: run line" has "$OUT" '^run: +launch, 2000 steps of 0.001 s \(2 s\), median of 3 after a warm-up run$'
check "axle_baseline: no topology change" has "$OUT" '^topology changes: +0 per run$'
check "axle_baseline: the baseline agrees" has "$OUT" '^baseline: +[0-9]+ ns per step median \(min [0-9]+, max [0-9]+\), hand-written bench/baseline_axle\.c, same launch \(relative difference [0-9.e+-]+\)$'
check "axle_baseline: the ratio" has "$OUT" "^framework/baseline: +$NUM$"
check "axle_baseline: the paired ratio" has "$OUT" "^paired: +$NUM median of 3 rounds "
# at another step size too: the baseline takes the same dt
run "$DG" "$AXLE" --steps 1000 --reps 1 --dt 0.0005
check "axle_baseline --dt 0.0005: the baseline agrees" has "$OUT" '^baseline: +[0-9]+ ns per step .*baseline_axle\.c, same launch'

# an edited twin keeps its name but not the baseline's trajectory
sed 's/"mass": 1500/"mass": 1600/' "$SEDAN" >"$TMP/edited.json"
run "$DG" "$TMP/edited.json" --steps 1000 --reps 1
check "edited twin: exit 0" rc_is 0
check "edited twin: timed" has "$OUT" '^ns per step: '
check "edited twin: not compared" has "$OUT" '^baseline: +not compared: .*was the graph edited\?$'
check "edited twin: no ratio" lacks "$OUT" 'framework/baseline'
check "edited twin: no paired ratio" lacks "$OUT" '^paired:'
sed 's/"c1": 40/"c1": 45/' "$AXLE" >"$TMP/edited_axle.json"
run "$DG" "$TMP/edited_axle.json" --steps 1000 --reps 1
check "edited axle twin: exit 0" rc_is 0
check "edited axle twin: not compared" has "$OUT" '^baseline: +not compared: .*differs from bench/baseline_axle\.c .*was the graph edited\?$'
check "edited axle twin: no ratio" lacks "$OUT" 'framework/baseline'

finish
