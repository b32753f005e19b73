#!/usr/bin/env bash
# Tests of `drivegraph cycle` (tools/cmd_cycle.c): the text and JSON
# reports, the plot and the CSV, the built-in cycles, backward mode, and
# the errors (an unknown cycle name with the names, a bad cycle file with
# its line and column, a graph without a driver block). Run by meson as
#   test_cli_cycle.sh <path-to-drivegraph> <source-root>
# The runs are short (a 40 s cycle at dt 0.01 s, a built-in one at a
# coarse step) so the suite stays fast; the physics of the runs is checked
# in tests/test_cycle.c.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

# Under LeakSanitizer: fontconfig (through cairo) and libltdl (PLplot's driver
# loader) keep process-lifetime caches that are never freed (the --plot
# runs). Nothing of ours is suppressed.
printf 'leak:libfontconfig.so\nleak:libltdl.so\n' >"$TMP/lsan.supp"
export LSAN_OPTIONS="suppressions=$TMP/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

EV=$ROOT/graphs/ev_battery.json
SEDAN=$ROOT/graphs/driver_follow.json
CYC=$TMP/short.csv
printf 'cycSecs,cycMps,cycGrade\n0,0,0\n5,0,0\n15,8,0.02\n25,8,0.02\n35,0,0\n40,0,0\n' >"$CYC"
# json_get JSON EXPR: a Python expression on the parsed object `o`.
json_get() { python3 -c 'import json, sys; o = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$2" <<<"$1"; }
json_true() { [[ $(json_get "$1" "$2") == True ]]; }

run "$DG" cycle --help
check "cycle --help: exit 0" rc_is 0
check "cycle --help: options" has "$OUT" '--cycle NAME\|FILE'
check "cycle --help: the built-in cycles" has "$OUT" 'udds.*hwfet|hwfet.*us06'
check "cycle --help: backward" has "$OUT" '--backward'
run "$DG" --help
check "drivegraph --help lists cycle" has "$OUT" '^  cycle '

run "$DG" cycle "$EV"
check "no --cycle: exit 2" rc_is 2
check "no --cycle: message" has "$ERR" 'no cycle given'
run "$DG" cycle "$EV" --cycle udss
check "unknown cycle: exit 2" rc_is 2
check "unknown cycle: did you mean" has "$ERR" "unknown cycle 'udss'; did you mean 'udds'\?"
check "unknown cycle: the names" has "$ERR" 'udds, hwfet, us06, wltc3b'
run "$DG" cycle "$EV" --cycle ftp72
check "unknown cycle without a close name: the names" has "$ERR" "unknown cycle 'ftp72' \(the cycles: udds, hwfet, us06, wltc3b, or a CSV file\)"

printf 'cycSecs,cycMps\n0,0\n1,2\n2,fast\n' >"$TMP/bad.csv"
run "$DG" cycle "$EV" --cycle "$TMP/bad.csv"
check "bad cycle file: exit 1" rc_is 1
check "bad cycle file: file:line:column" has "$ERR" "bad\.csv:4:3: speed: expected a finite number \(got \"fast\"\)"
run "$DG" cycle "$EV" --cycle "$TMP/missing.csv"
check "missing cycle file: exit 1" rc_is 1
check "missing cycle file: message" has "$ERR" 'missing\.csv: cannot read file'

run "$DG" cycle "$ROOT/graphs/sedan_rwd_automatic.json" --cycle "$CYC"
check "graph without a driver: exit 1" rc_is 1
check "graph without a driver: names the graph" has "$ERR" 'sedan_rwd_automatic\.json: /blocks: the graph has no driver block'

# ---------------------------------------------------------------------------
# forward, text, plot, CSV

run "$DG" cycle "$EV" --cycle "$CYC" --dt 0.01 --plot "$TMP/ev.png" --csv "$TMP/ev.csv"
check "EV forward: exit 0" rc_is 0
check "EV forward: graph line" has "$OUT" '^graph: .*ev_battery\.json'
check "EV forward: cycle line" has "$OUT" '^cycle: .*short\.csv, 40 s, .*forward'
check "EV forward: distance" has "$OUT" '^distance: .*km \(the trace: 0\.160 km\)'
check "EV forward: trace tolerance met" has "$OUT" '^trace: .*EPA tolerance \(2 mph within 1 s\): met at every step \(4000\)'
check "EV forward: no fuel" has "$OUT" '^fuel: +none'
check "EV forward: electricity" has "$OUT" '^electricity: .* Wh/km'
check "EV forward: state of charge" has "$OUT" 'state of charge 0\.9000 -> 0\.[0-9]+ \(min'
check "EV forward: brakes" has "$OUT" 'friction brakes'
check "EV forward: drag and grade" has "$OUT" 'drag [0-9.e+]+, rolling [0-9.e+]+, grade [0-9.e+]+'
check "EV forward: the blocks' energies" has "$OUT" '^  motor +motor +[-0-9.e+]+ +0 +0 '
check "EV forward: plot written (PNG)" bash -c "head -c 8 '$TMP/ev.png' | od -c | grep -q 'P   N   G'"
check "EV forward: plot named" has "$OUT" "^plot: +$(re "$TMP/ev.png")"
check "EV forward: CSV header" bash -c "head -1 '$TMP/ev.csv' | grep -q '^t,driver\.throttle,'"
check "EV forward: CSV rows (1 s)" bash -c "[[ \$(wc -l <'$TMP/ev.csv') -eq 42 ]]"

run "$DG" cycle "$EV" --cycle "$CYC" --dt 0.01 --json
check "EV --json: exit 0" rc_is 0
check "EV --json: one line" line_count_is "$OUT" 1
check "EV --json: mode" json_true "$OUT" 'o["mode"] == "forward" and o["driver"] == "driver" and o["vehicle"] == "body"'
check "EV --json: keys" json_true "$OUT" 'all(k in o for k in ["dt_s", "steps", "distance_m", "trace_distance_m", "trace", "fuel", "electricity", "charge_balance", "energy", "backward", "wall_time_s"])'
check "EV --json: trace" json_true "$OUT" 'o["trace"]["violations"] == 0 and o["trace"]["samples"] == 4000 and o["trace"]["worst_time_s"] is None'
check "EV --json: no fuel, electricity" json_true "$OUT" 'o["fuel"] is None and o["electricity"]["Wh_per_km"] > 0 and o["electricity"]["soc_swing"] > 0'
check "EV --json: energies" json_true "$OUT" 'o["energy"]["regen_J"] > 0 and o["energy"]["grade_J"] > 0 and o["energy"]["blocks"]["motor"]["heat_J"] > 0 and o["energy"]["blocks"]["body"]["type"] == "vehicle"'
check "EV --json: balance" json_true "$OUT" 'o["energy"]["balance_error_relative"] < 1e-6'
check "EV --json: forward has no enforcement" json_true "$OUT" 'o["backward"] is None'

run "$DG" cycle "$SEDAN" --cycle "$CYC" --dt 0.002 --json
check "sedan --json: exit 0" rc_is 0
check "sedan --json: fuel" json_true "$OUT" 'o["fuel"]["fuel_g"] > 0 and o["fuel"]["L_per_100km"] > 0 and o["fuel"]["mpg"] > 0'
check "sedan --json: no battery" json_true "$OUT" 'o["electricity"] is None and o["charge_balance"] is None'

# ---------------------------------------------------------------------------
# backward, a built-in cycle

run "$DG" cycle "$EV" --cycle "$CYC" --dt 0.01 --backward --json
check "EV backward: exit 0" rc_is 0
check "EV backward: mode" json_true "$OUT" 'o["mode"] == "backward" and abs(o["distance_m"] - o["trace_distance_m"]) < 1e-6'
check "EV backward: enforcement" json_true "$OUT" 'o["backward"]["enforcement_in_J"] >= 0 and o["backward"]["enforcement_out_J"] <= 0 and o["backward"]["enforcement_peak_N"] >= 0'
check "EV backward: the source in the blocks" json_true "$OUT" 'o["energy"]["blocks"]["cycle_speed_source"]["type"] == "linear_speed_source"'
run "$DG" cycle "$EV" --cycle "$CYC" --dt 0.01 --backward
check "EV backward text: enforcement" has "$OUT" 'trace enforcement +[-0-9.e+]+ in, [-0-9.e+]+ out \(peak'

run "$DG" cycle "$EV" --cycle "$CYC" --dt 1 --backward --iterate --json
check "EV backward --iterate at 1 s: exit 0" rc_is 0
check "EV backward --iterate: 40 steps, the trace exactly" json_true "$OUT" 'o["steps"] == 40 and abs(o["distance_m"] - o["trace_distance_m"]) < 1e-6'
run "$DG" cycle "$EV" --cycle "$CYC" --iterate
check "--iterate without --backward: exit 2" rc_is 2
check "--iterate without --backward: message" has "$ERR" '--iterate is for backward runs'

run "$DG" cycle "$EV" --cycle hwfet --dt 0.5 --backward --json
check "built-in hwfet: exit 0" rc_is 0
check "built-in hwfet: its length" json_true "$OUT" 'o["cycle"] == "hwfet" and o["cycle_duration_s"] == 765 and o["steps"] == 1530'
DRIVEGRAPH_CYCLE_DIR=$TMP/nowhere run "$DG" cycle "$EV" --cycle hwfet --dt 0.5
check "built-in: the directory is searched first" rc_is 0

finish
