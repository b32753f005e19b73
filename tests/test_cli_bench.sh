#!/usr/bin/env bash
# Tests of `drivegraph bench` and `drivegraph sweep` (tools/cmd_bench.c,
# tools/cmd_sweep.c): outputs, files and exit codes. The bench program
# drivegraph-bench has its own (tests/test_bench.sh). Run by meson as
#   test_cli_bench.sh <path-to-drivegraph> <source-root>
# Timings are not asserted (the machine may be busy); what is asserted is
# the shape of the report, the counts, and that sweeps are exact and
# independent of --jobs and --shard.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

same_text() { [[ "$1" == "$2" ]]; }
# Every line parses as JSON (when python3 is there; it is a build dependency).
json_lines() {
  if ! command -v python3 >/dev/null; then return 0; fi
  python3 -c 'import json, sys
for line in sys.stdin: json.loads(line)' <<<"$1"
}
# The value of a top-level field of JSON line N (1-based): a crude reader
# for flat fields, enough for numbers and null.
field() { sed -n "$1p" <<<"$2" | grep -Eo "\"$3\":[^,}]*" | head -1 | cut -d: -f2; }

SEDAN=$ROOT/graphs/bench/sedan_baseline.json
AXLE=$ROOT/graphs/bench/axle_baseline.json
TREE=$ROOT/graphs/bench/diff_tree_2.json

# ---------------------------------------------------------------------------
# bench (the comparison with the hand-written baselines is the bench
# program's: tests/test_bench.sh)

run "$DG" bench --help
check "bench --help: exit 0" rc_is 0
check "bench --help: options" has "$OUT" '--steps N'
check "bench --help: the launch" has "$OUT" 'full throttle from rest'
check "bench --help: the baselines are the bench program's" has "$OUT" 'drivegraph-bench'

run "$DG" bench
check "bench without a graph: exit 2" rc_is 2
check "bench without a graph: message" has "$ERR" 'drivegraph bench: no graph file given'
run "$DG" bench "$TREE" "$SEDAN"
check "bench two graphs: exit 2" rc_is 2
check "bench two graphs: message" has "$ERR" "drivegraph bench: one graph file expected \(got '.*sedan_baseline.json' too\)"
run "$DG" bench "$TREE" --steps 0
check "bench --steps 0: exit 2" rc_is 2
check "bench --steps 0: message" has "$ERR" "--steps: expected a whole number >= 1 \(got '0'\)"
run "$DG" bench "$TREE" --reps many
check "bench --reps many: exit 2" rc_is 2
run "$DG" bench "$TREE" --dt -1
check "bench --dt -1: exit 2" rc_is 2
run "$DG" bench "$TREE" --frobnicate
check "bench unknown option: exit 2" rc_is 2
run "$DG" bench "$TMP/none.json"
check "bench missing file: exit 1" rc_is 1
check "bench missing file: named" has "$ERR" 'none.json: cannot read file'
printf '{ "drivegraph": 1, "blocks": { "g": { "type": "gear", "ratio": -1 } }, "connections": [] }' >"$TMP/bad.json"
run "$DG" bench "$TMP/bad.json"
check "bench invalid graph: exit 1" rc_is 1
check "bench invalid graph: the problem" has "$ERR" '/blocks/g/ratio: must be > 0 \(got -1\)'

# the sedan baseline's twin, timed like any graph: 3 s of launch = one
# upshift = two topology changes; no baseline in the tool
run "$DG" bench "$SEDAN" --steps 3000 --reps 3
check "bench sedan_baseline: exit 0" rc_is 0
check "bench sedan_baseline: graph line" has "$OUT" '^graph: +.*sedan_baseline.json \(9 blocks, 16 nodes, 5-6 DOFs\)$'
check "bench sedan_baseline: run line" has "$OUT" '^run: +launch, 3000 steps of 0.001 s \(3 s\), median of 3 after a warm-up run$'
check "bench sedan_baseline: topology changes" has "$OUT" '^topology changes: +2 per run$'
check "bench sedan_baseline: ns per step" has "$OUT" "^ns per step: +[0-9]+ median \(min [0-9]+, max [0-9]+\)$"
check "bench sedan_baseline: steps per second" has "$OUT" '^steps per second: +[0-9]+$'
check "bench sedan_baseline: real-time factor" has "$OUT" '^real-time factor: +[0-9]+ at dt = 0.001 s$'
check "bench sedan_baseline: six lines" line_count_is "$OUT" 6
check "bench sedan_baseline: no baseline in the tool" lacks "$OUT" '^(baseline|framework/baseline):'

# the axle baseline's twin: 2 DOFs, no mode change
run "$DG" bench "$AXLE" --steps 2000 --reps 3
check "bench axle_baseline: exit 0" rc_is 0
check "bench axle_baseline: graph line" has "$OUT" '^graph: +.*axle_baseline.json \(5 blocks, 5 nodes, 2 DOFs\)$'
check "bench axle_baseline: run line" has "$OUT" '^run: +launch, 2000 steps of 0.001 s \(2 s\), median of 3 after a warm-up run$'
check "bench axle_baseline: no topology change" has "$OUT" '^topology changes: +0 per run$'
check "bench axle_baseline: no baseline in the tool" lacks "$OUT" '^(baseline|framework/baseline):'

# --lean: simulations keeping neither the work nor the angles, said so
run "$DG" bench "$AXLE" --steps 500 --reps 1 --lean
check "bench --lean: exit 0" rc_is 0
check "bench --lean: said" has "$OUT" '^keeps: +neither the work nor the angles \(--lean\)$'
check "bench --lean: seven lines" line_count_is "$OUT" 7
run "$DG" bench --help
check "bench --help: --lean" has "$OUT" '--lean'

# any other graph: its own counts
run "$DG" bench "$TREE" --steps 200 --reps 1 --dt 0.002
check "bench diff_tree_2: exit 0" rc_is 0
check "bench diff_tree_2: 2 DOFs" has "$OUT" '\(5 blocks, 5 nodes, 2 DOFs\)$'
check "bench diff_tree_2: dt" has "$OUT" '200 steps of 0.002 s \(0.4 s\)'
check "bench diff_tree_2: no topology change" has "$OUT" '^topology changes: +0 per run$'
check "bench diff_tree_2: no baseline" lacks "$OUT" 'baseline'

# the tool carries no test code: no symbol of the hand-written baselines
if command -v nm >/dev/null; then
  check "bench: the baselines are not in the tool" lacks "$(nm "$DG")" 'baseline_(sedan|axle)_'
fi

# ---------------------------------------------------------------------------
# sweep: options

run "$DG" sweep --help
check "sweep --help: exit 0" rc_is 0
check "sweep --help: options" has "$OUT" '--shard I/N'
run "$DG" sweep
check "sweep without a graph: exit 2" rc_is 2
run "$DG" sweep "$SEDAN" --set engine.inertia
check "sweep --set without values: exit 2" rc_is 2
check "sweep --set without values: message" has "$ERR" "--set: expected BLOCK.PARAM=V1,V2,... \(got 'engine.inertia'\)"
run "$DG" sweep "$SEDAN" --shard 2/2
check "sweep --shard 2/2: exit 2" rc_is 2
check "sweep --shard 2/2: message" has "$ERR" "--shard: expected I/N with 0 <= I < N \(got '2/2'\)"
run "$DG" sweep "$SEDAN" --jobs 0
check "sweep --jobs 0: exit 2" rc_is 2

# bad overrides are named before anything runs, and nothing is written
run "$DG" sweep "$SEDAN" --set engine.inertia=0.2,-1 --output "$TMP/bad.jsonl"
check "sweep out-of-range value: exit 1" rc_is 1
check "sweep out-of-range value: named" has "$ERR" '^drivegraph sweep: --set engine.inertia=-1: .*sedan_baseline.json: /blocks/engine/inertia: must be > 0 \(got -1\) \(override engine.inertia=-1\)$'
check "sweep out-of-range value: no output" no_file "$TMP/bad.jsonl"
check "sweep out-of-range value: no temporary file" no_file "$TMP/bad.jsonl.tmp"
run "$DG" sweep "$SEDAN" --set engin.inertia=0.2
check "sweep unknown block: exit 1" rc_is 1
check "sweep unknown block: did you mean" has "$ERR" 'no block "engin" in the graph; did you mean "engine"\?'
run "$DG" sweep "$SEDAN" --set engine.inertai=0.2
check "sweep unknown parameter: exit 1" rc_is 1
check "sweep unknown parameter: did you mean" has "$ERR" '/blocks/engine/inertai: unknown parameter; did you mean "inertia"\? \(override engine.inertai=0.2\)'
run "$DG" sweep "$SEDAN" --signals engine.rmp
check "sweep unknown signal: exit 1" rc_is 1
check "sweep unknown signal: did you mean" has "$ERR" 'unknown signal "engine.rmp"; did you mean "engine.rpm"\?'

# ---------------------------------------------------------------------------
# sweep: a 2 x 2 grid

GRID=(--set engine.inertia=0.15,0.25 --set final.ratio=3.9,4.3 --duration 1.5 --signals body.speed,gearbox.gear)
run "$DG" sweep "$SEDAN" "${GRID[@]}" --jobs 2
check "sweep grid: exit 0" rc_is 0
GRID_OUT=$OUT
check "sweep grid: four lines" line_count_is "$OUT" 4
check "sweep grid: JSON" json_lines "$OUT"
check "sweep grid: variant order" same_text "$(grep -Eo '^\{"variant":[0-9]+' <<<"$OUT" | tr -d '{"variant:' | tr '\n' ' ')" "0 1 2 3 "
check "sweep grid: last --set fastest" has "$OUT" '^\{"variant":1,"overrides":\{"engine.inertia":0.15,"final.ratio":4.3\},'
check "sweep grid: first --set slowest" has "$OUT" '^\{"variant":2,"overrides":\{"engine.inertia":0.25,"final.ratio":3.9\},'
check "sweep grid: summary fields" has "$OUT" '"t_0_100_kmh_s":null,"top_speed_kmh":[0-9.e+-]+,"final_time_s":[0-9.e+-]+,"steps":1500,"topology_changes":[0-9]+,"energy":\{"work_in_J":[0-9.e+-]+,"balance_error_J":[0-9.e+-]+,"balance_error_relative":[0-9.e+-]+\},"final_values":\{"body.speed":[0-9.e+-]+,"gearbox.gear":[0-9]+\}\}$'
check "sweep grid: summary on stderr" has "$ERR" '^drivegraph sweep: 4 variants \(shard 0/1 of 4\) in [0-9.]+ s on 2 threads: 4 ok, 0 failed$'
check "sweep grid: the overrides change the runs" [ "$(field 1 "$OUT" top_speed_kmh)" != "$(field 4 "$OUT" top_speed_kmh)" ]

run "$DG" sweep "$SEDAN" "${GRID[@]}" --jobs 1
check "sweep --jobs 1: same bytes as --jobs 2" same_text "$OUT" "$GRID_OUT"
run "$DG" sweep "$SEDAN" "${GRID[@]}" --jobs 3 --shard 0/2
SHARD0=$OUT
check "sweep --shard 0/2: even variants" same_text "$(grep -Eo '^\{"variant":[0-9]+' <<<"$OUT" | tr -d '{"variant:' | tr '\n' ' ')" "0 2 "
run "$DG" sweep "$SEDAN" "${GRID[@]}" --shard 1/2
check "sweep --shard 1/2: summary" has "$ERR" '2 variants \(shard 1/2 of 4\)'
check "sweep shards: the union is the sweep" same_text "$(printf '%s\n%s\n' "$SHARD0" "$OUT" | sort -t: -k2 -n)" "$(sort -t: -k2 -n <<<"$GRID_OUT")"

# no overrides: the base graph; overriding a value with the file's own
# value: the same run, bit for bit
results() { sed 's/.*"t_0_100_kmh_s"/"t_0_100_kmh_s"/' <<<"$1"; }
run "$DG" sweep "$SEDAN" --duration 1.5 --signals body.speed,engine.rpm
check "sweep no overrides: one line" line_count_is "$OUT" 1
check "sweep no overrides: empty overrides" has "$OUT" '^\{"variant":0,"overrides":\{\},'
BASE_OUT=$OUT
run "$DG" sweep "$SEDAN" --set engine.inertia=0.20 --duration 1.5 --signals body.speed,engine.rpm
check "sweep the file's own value: same results" same_text "$(results "$OUT")" "$(results "$BASE_OUT")"

# --output: complete or nothing
run "$DG" sweep "$SEDAN" "${GRID[@]}" --output "$TMP/grid.jsonl"
check "sweep --output: exit 0" rc_is 0
check "sweep --output: nothing on stdout" line_count_is "$OUT" 0
check "sweep --output: the file" same_text "$(cat "$TMP/grid.jsonl")" "$GRID_OUT"
check "sweep --output: no temporary file" no_file "$TMP/grid.jsonl.tmp"

# ---------------------------------------------------------------------------
# sweep: one every-mode check per structure (lib/run/batch.c)

# Inertia values in one sweep reuse the base graph's check after probing the
# range they span; alone, each is loaded in full. The results are the same
# bytes.
run "$DG" sweep "$SEDAN" --set engine.inertia=0.15,0.25,0.3 --duration 1 --signals body.speed,engine.rpm
check "sweep reusing the check: exit 0" rc_is 0
REUSED=$(results "$OUT")
ALONE=""
for value in 0.15 0.25 0.3; do
  run "$DG" sweep "$SEDAN" --set engine.inertia=$value --duration 1 --signals body.speed,engine.rpm
  ALONE+="$(results "$OUT")"$'\n'
done
check "sweep reusing the check: the results of full loads" same_text "$REUSED"$'\n' "$ALONE"

# A structural override that makes the graph invalid is refused with the
# message `validate` gives for the edited graph; so is an inertia set to 0
# where it leaves a degree of freedom without inertia.
cat >"$TMP/axle.json" <<'EOF'
{ "drivegraph": 1, "blocks": {
  "src": {"type": "torque_source", "inertia": 0.2, "torque": 50},
  "diff": {"type": "differential", "kind": "open"},
  "wl": {"type": "wheel", "radius": 0.30, "inertia": 1},
  "wr": {"type": "wheel", "radius": 0.32, "inertia": 1},
  "body": {"type": "vehicle", "mass": 1000}},
 "connections": [["src.out", "diff.in"], ["diff.left", "wl.hub"], ["diff.right", "wr.hub"],
   ["wl.ground", "body.rear_left"], ["wr.ground", "body.rear_right"]] }
EOF
printf '{"src.torque": 40}\n{"diff.kind": "locked"}\n{"src.torque": 60}\n' >"$TMP/axle.jsonl"
sed 's/"kind": "open"/"kind": "locked"/' "$TMP/axle.json" >"$TMP/axle_locked.json"
run "$DG" validate "$TMP/axle_locked.json"
LOCKED=${OUT#"$TMP/axle_locked.json: "}
check "sweep structural refusal: validate refuses the edited graph" has "$LOCKED" '^/blocks/diff: over-constrained'
run "$DG" sweep "$TMP/axle.json" --variants "$TMP/axle.jsonl" --duration 0.1 --signals body.speed
check "sweep structural refusal: exit 1" rc_is 1
check "sweep structural refusal: validate's message" same_text \
  "$(sed -n 2p <<<"$OUT")" \
  "{\"variant\":1,\"overrides\":{\"diff.kind\":\"locked\"},\"error\":\"$TMP/axle.json: ${LOCKED//\"/\\\"} (with 1 override)\"}"
check "sweep structural refusal: the others ran" has "$ERR" '3 variants .*: 2 ok, 1 failed$'

cat >"$TMP/plate.json" <<'EOF'
{ "drivegraph": 1, "blocks": {
  "src": {"type": "torque_source", "inertia": 0.5, "torque": 10},
  "clutch": {"type": "clutch", "max_torque": 50, "inertia": 0.2},
  "ld": {"type": "load", "c1": 0.1}},
 "connections": [["src.out", "clutch.in"], ["clutch.out", "ld.in"]] }
EOF
sed 's/"inertia": 0.2}/"inertia": 0}/' "$TMP/plate.json" >"$TMP/plate_zero.json"
run "$DG" validate "$TMP/plate_zero.json"
ZERO=${OUT#"$TMP/plate_zero.json: "}
check "sweep inertia 0: validate refuses the edited graph" has "$ZERO" 'a degree of freedom has no inertia'
run "$DG" sweep "$TMP/plate.json" --set clutch.inertia=0.3,0.25,0,0.1 --duration 0.1
check "sweep inertia 0: exit 1" rc_is 1
check "sweep inertia 0: named before anything runs, with validate's message" same_text "$ERR" \
  "drivegraph sweep: --set clutch.inertia=0: $TMP/plate.json: $ZERO (with 1 override)"
run "$DG" sweep "$TMP/plate.json" --set clutch.inertia=0.3,0.25,0.1 --duration 0.1
check "sweep inertia above 0: exit 0" rc_is 0

# ---------------------------------------------------------------------------
# sweep: JSON Lines variants

cat >"$TMP/variants.jsonl" <<'EOF'
{"engine.inertia": 0.15, "diff.inertia": 0.04}

{"wheel_rl.tyre.D": 0.9, "wheel_rr.tyre.D": 0.9}
{"gearbox.shift.upshift_rpm": 5500}
EOF
run "$DG" sweep "$SEDAN" --variants "$TMP/variants.jsonl" --set final.ratio=3.9,4.3 --duration 1 --signals body.speed
check "sweep --variants x grid: exit 0" rc_is 0
check "sweep --variants x grid: six lines" line_count_is "$OUT" 6
check "sweep --variants x grid: JSON" json_lines "$OUT"
check "sweep --variants x grid: line 2, grid point 1" has "$OUT" '^\{"variant":3,"overrides":\{"wheel_rl.tyre.D":0.9,"wheel_rr.tyre.D":0.9,"final.ratio":4.3\},'
check "sweep --variants x grid: nested key" has "$OUT" '^\{"variant":4,"overrides":\{"gearbox.shift.upshift_rpm":5500,"final.ratio":3.9\},'

printf '{"engine.inertia": 0.2}\n{"engine.inertia": 0.2,\n' >"$TMP/broken.jsonl"
run "$DG" sweep "$SEDAN" --variants "$TMP/broken.jsonl"
check "sweep broken JSON Lines: exit 1" rc_is 1
check "sweep broken JSON Lines: line and column" has "$ERR" 'broken.jsonl:2:[0-9]+: '
printf '[1, 2]\n' >"$TMP/array.jsonl"
run "$DG" sweep "$SEDAN" --variants "$TMP/array.jsonl"
check "sweep JSON Lines array: exit 1" rc_is 1
check "sweep JSON Lines array: message" has "$ERR" 'array.jsonl:1: expected an object of overrides'
run "$DG" sweep "$SEDAN" --variants "$TMP/none.jsonl"
check "sweep missing variants file: exit 1" rc_is 1

# a variant that fails keeps its place, with its error; the others run
printf '{"engine.inertia": 0.2}\n{"engine.idle_rpm": 7000}\n{"engine.inertia": 0.3}\n' >"$TMP/onebad.jsonl"
run "$DG" sweep "$SEDAN" --variants "$TMP/onebad.jsonl" --duration 0.5 --signals body.speed --output "$TMP/onebad.out"
check "sweep failing variant: exit 1" rc_is 1
check "sweep failing variant: stderr names it" has "$ERR" 'variant 1 failed: .*/blocks/engine/redline_rpm: must be > idle_rpm \(7000\) \(got 6500\) \(with 1 override\)'
check "sweep failing variant: summary" has "$ERR" '3 variants .*: 2 ok, 1 failed$'
check "sweep failing variant: the file is complete" line_count_is "$(cat "$TMP/onebad.out")" 3
check "sweep failing variant: its error line" has "$(cat "$TMP/onebad.out")" '^\{"variant":1,"overrides":\{"engine.idle_rpm":7000\},"error":".*must be > idle_rpm'

# a scenario: its stop condition ends the runs early
cat >"$TMP/stop.json" <<'EOF'
{ "inputs": { "throttle": [[0, 1]] }, "stop": { "signal": "body.speed", "above": 5 } }
EOF
run "$DG" sweep "$SEDAN" --scenario "$TMP/stop.json" --set engine.inertia=0.15,0.3 --duration 10 --signals body.speed
check "sweep --scenario: exit 0" rc_is 0
check "sweep --scenario: stopped early" [ "$(field 1 "$OUT" steps)" -lt 10000 ]
check "sweep --scenario: above the stop speed" has "$OUT" '"final_values":\{"body.speed":5\.[0-9]+'

finish
