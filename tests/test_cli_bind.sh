#!/usr/bin/env bash
# Bindings checked against their inputs' kinds and ranges, elements that
# can never act named, untrusted text escaped, bounded input (issue 21,
# items 3-6; docs/errors.md). Run by meson as
#   test_cli_bind.sh <path-to-drivegraph> <source-root>
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

INV=$ROOT/tests/data/invalid

# ---- kinds: an integer gear, a boolean lock-up, a table of two ---------------
run "$DG" validate "$INV/gear_fraction.json"
check "gear 2.5: refused" rc_is 1
check "gear 2.5: named at the binding, with the gears the box has" has_fixed "$OUT" \
  '/blocks/gb/inputs/gear: must be an integer from -1 to 5 (got 2.5)'
run "$DG" sim "$INV/gear_fraction.json" --duration 0.1
check "gear 2.5: sim refuses it too" rc_is 1
run "$DG" validate "$INV/gear_from_sine.json"
check "gear from a sine: refused" rc_is 1
check "gear from a sine: both places named" has_fixed "$OUT" \
  '/blocks/gb/inputs/gear: "lever.value": input "gear" takes an integer from 0 to 5, and signal "value" of sine_source "lever" (/blocks/lever)'
run "$DG" validate "$INV/lockup_half.json"
check "lock-up 0.5: a boolean takes 0 or 1" has_fixed "$OUT" 'must be 0 or 1 (got 0.5)'
run "$DG" validate "$INV/table_one_breakpoint.json"
check "one breakpoint: refused" has_fixed "$OUT" \
  '/blocks/cmd/table/time: must have at least 2 elements (got 1)'
run "$DG" validate "$INV/signal_out_of_range.json"
check "a sine that never reaches 0..1: can never fit" has_fixed "$OUT" \
  'takes values in [-6, -4], and input "engagement" takes a value in [0, 1]: it can never fit'

# ---- loops through a block's own output --------------------------------------
run "$DG" validate "$INV/clutch_own_engagement.json"
check "clutch engagement from its own signal: refused" rc_is 1
check "clutch engagement from its own signal: named" has_fixed "$OUT" \
  '/blocks/c/inputs/engagement: "c.engagement": input "engagement" follows the block'"'"'s own signal "engagement"'

# ---- schedules: each value against every input its channel feeds ------------
cat >"$TMP/manual.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": {
    "eng": { "type": "torque_source", "inertia": 0.2, "torque": 50 },
    "gb":  { "type": "gearbox", "ratios": [3.5, 2.1, 1.4, 1.0, 0.8], "reverse": 3.2,
             "shift": { "mode": "manual" } },
    "ld":  { "type": "load", "inertia": 2.0 } },
  "connections": [["eng.out", "gb.in"], ["gb.out", "ld.in"]] }
EOF
cat >"$TMP/gears.json" <<'EOF'
{ "duration": 1, "inputs": { "gear": [[0, 1], [0.5, 2], [0.8, 7]] } }
EOF
run "$DG" sim "$TMP/manual.json" --scenario "$TMP/gears.json"
check "gear 7 of a 5-speed box: refused" rc_is 1
check "gear 7: the scenario's breakpoint and the graph's input named" has_fixed "$ERR" \
  "gears.json: /inputs/gear/2/1: must be an integer from -1 to 5 (got 7): channel \"gear\" feeds input \"gear\" of gearbox \"gb\" ($TMP/manual.json: /blocks/gb, by default)"
run "$DG" validate "$TMP/manual.json" --scenario "$TMP/gears.json"
check "validate --scenario: the same" has_fixed "$OUT" 'gears.json: /inputs/gear/2/1: must be an integer from -1 to 5 (got 7)'
cat >"$TMP/pedal.json" <<'EOF'
{ "duration": 1, "inputs": { "throttle": [[0, 0], [0.5, 1.5]] } }
EOF
run "$DG" validate "$ROOT/graphs/sedan_rwd_automatic.json" --scenario "$TMP/pedal.json"
check "throttle 1.5: refused" rc_is 1
check "throttle 1.5: out of the engine's range, both places named" has_fixed "$OUT" \
  "pedal.json: /inputs/throttle/1/1: must be a value in [0, 1] (got 1.5): channel \"throttle\" feeds input \"throttle\" of engine \"engine\" ($ROOT/graphs/sedan_rwd_automatic.json: /blocks/engine, by default)"

# ---- a source faster than the step ---------------------------------------------
cat >"$TMP/sine.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": {
    "s":   { "type": "sine_source", "amplitude": 10, "frequency": 1e300 },
    "src": { "type": "torque_source", "inertia": 0.2, "inputs": { "command": "s.value" } },
    "ld":  { "type": "load", "inertia": 2.0 } },
  "connections": [["src.out", "ld.in"]] }
EOF
run "$DG" sim "$TMP/sine.json" --duration 0.1
check "sine at 1e300 Hz: not run" rc_is 1
check "sine at 1e300 Hz: the dt it needs" has_fixed "$ERR" \
  '/blocks/s: signal "value" oscillates at 1e+300 Hz, faster than steps of 0.001 s can sample (at most 500 Hz, half the step rate): use dt <= 5e-301 s'
run "$DG" validate "$TMP/sine.json"
check "sine at 1e300 Hz: validate says so" rc_is 1
sed -i 's/1e300/200/' "$TMP/sine.json"
run "$DG" validate "$TMP/sine.json" --dt 0.01
check "sine at 200 Hz, dt 0.01: refused" has_fixed "$OUT" 'use dt <= 0.0025 s'
run "$DG" validate "$TMP/sine.json" --dt 0.002
check "sine at 200 Hz, dt 0.002: fine" rc_is 0

# ---- elements that can never act, locked drivetrains: warnings ---------------
cat >"$TMP/short.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": {
    "eng": { "type": "torque_source", "inertia": 0.2, "torque": 50 },
    "sd":  { "type": "spring_damper", "stiffness": 1000, "damping": 1 },
    "g":   { "type": "gear", "ratio": 1 },
    "ld":  { "type": "load", "inertia": 2.0 } },
  "connections": [["eng.out", "sd.in", "g.in"], ["sd.out", "g.out", "ld.in"]] }
EOF
run "$DG" validate "$TMP/short.json"
check "spring on one rigid shaft: valid" rc_is 0
check "spring on one rigid shaft: warned at the block" has_fixed "$OUT" \
  "$TMP/short.json: /blocks/sd: warning: spring_damper \"sd\" can never act: its ends sd.in and sd.out turn as one shaft in every mode"
check "spring on one rigid shaft: the ok line follows" has "$OUT" 'short\.json: ok \('
run "$DG" sim "$TMP/short.json" --duration 0.01
check "spring on one rigid shaft: sim warns on stderr" has_fixed "$ERR" '/blocks/sd: warning: spring_damper "sd" can never act'
run "$DG" validate "$INV/backlash_wider_than_a_turn.json"
check "backlash 1e300: refused" has_fixed "$OUT" \
  '/blocks/sd/backlash: must be <= 6.28319 rad, one turn (got 1e+300)'

cat >"$TMP/held.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": {
    "eng": { "type": "torque_source", "inertia": 0.2, "torque": 50 },
    "pg":  { "type": "planetary", "sun_teeth": 30, "ring_teeth": 78,
             "sun_inertia": 0.01, "ring_inertia": 0.02 },
    "b1":  { "type": "brake", "kind": "lock" },
    "b2":  { "type": "brake", "kind": "lock" },
    "ld":  { "type": "load", "inertia": 2.0 } },
  "connections": [["eng.out", "pg.carrier", "ld.in"], ["pg.sun", "b1.in"], ["pg.ring", "b2.in"]] }
EOF
run "$DG" sim "$TMP/held.json" --duration 0.01
check "planetary with two members held: runs" rc_is 0
check "planetary with two members held: the lock named" has_fixed "$ERR" \
  'warning: from t = 0.001 s to the end the drivetrain was locked by brake "b1", brake "b2": no shaft could turn (0 degrees of freedom)'
run "$DG" sim "$ROOT/graphs/gear_train.json" --scenario "$ROOT/graphs/scenarios/gear_train_pulse.json"
check "a load stuck at rest for a while: no lock warning" lacks "$ERR" 'locked'

cat >"$TMP/driver.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": {
    "drv": { "type": "driver", "trace": { "time": [0, 10], "speed_kmh": [0, 50] } },
    "src": { "type": "torque_source", "inertia": 0.2, "inputs": { "command": "drv.command" } },
    "ld":  { "type": "load", "inertia": 2.0 } },
  "connections": [["src.out", "ld.in"]] }
EOF
run "$DG" validate "$TMP/driver.json"
check "driver without a vehicle: warned" has_fixed "$OUT" \
  '/blocks/drv: warning: driver "drv": input "speed" follows the speed of the graph'"'"'s vehicle, and the graph has no vehicle: it reads 0 throughout'
check "driver without a vehicle: every line is FILE: /path: text" \
  all_lines_match "$OUT" "^$(re "$TMP")/driver\\.json: [^ ]"

# ---- untrusted text ------------------------------------------------------------
run "$DG" validate "$INV/control_ids.json"
check "control ids: refused" rc_is 1
check "control ids: no ESC reaches the terminal" lacks "$OUT$ERR" $'\e'
check "control ids: no right-to-left override either" lacks "$OUT$ERR" $'\u202e'
check "control ids: ESC shown escaped" has_fixed "$OUT" '/blocks/eng\u001B[2J: block id has U+001B at character 4'
check "control ids: RLO shown escaped" has_fixed "$OUT" '/blocks/ab\u202Egnp.exe: block id has U+202E'
check "control ids: a newline in an id forges no ok line" lacks "$OUT" '^x\.json: ok'
check "control ids: every line is the file's" all_lines_match "$OUT" "^$(re "$INV")/control_ids\\.json: [^ ]"
check "control ids: as many lines as problems" line_count_is "$OUT" 6
# a file name with a newline and ESC, given on the command line
bad=$'\e[2Jx\ny.json'
cp "$ROOT/graphs/gear_train.json" "$TMP/$bad"
run "$DG" validate "$TMP/$bad"
check "odd file name: valid" rc_is 0
check "odd file name: escaped in the ok line" has_fixed "$OUT" '\u001B[2Jx\u000Ay.json: ok ('
check "odd file name: one line" line_count_is "$OUT" 1
run "$DG" validate "$TMP/$bad.missing"
check "odd missing file name: escaped in the error" has_fixed "$OUT" '\u001B[2Jx\u000Ay.json.missing: cannot read file'
check "odd missing file name: no ESC" lacks "$OUT$ERR" $'\e'

run "$DG" sim "$ROOT/graphs/gear_train.json" --duration 0.1 --signals $'a\e[2J'
check "--signals with ESC: refused, escaped" has_fixed "$ERR" 'unknown channel "a\u001B[2J"'
run "$DG" sim "$ROOT/graphs/gear_train.json" --duration 0.1 --csv $'/nonexistent/\e[2J.csv'
check "--csv path with ESC: the write error escaped" has_fixed "$ERR" \
  'cannot write /nonexistent/\u001B[2J.csv: No such file or directory'
run "$DG" sim "$ROOT/graphs/gear_train.json" $'--\e[2Jx'
check "an option with ESC: the usage error escaped" has_fixed "$ERR" '\u001B[2Jx'
check "no ESC on stderr from the command line either" lacks "$ERR" $'\e'

# ---- identifiers: normalized, lookalikes hinted --------------------------------
printf '{"drivegraph": 1, "blocks": {"caf\\u00e9": {"type": "torque_source", "inertia": 1, "torque": 1},\n "ld": {"type": "load", "inertia": 1}},\n "connections": [["cafe\\u0301.out", "ld.in"]]}\n' >"$TMP/nfd.json"
run "$DG" validate "$TMP/nfd.json"
check "an NFD reference finds the NFC id" rc_is 0
run "$DG" sim "$TMP/nfd.json" --duration 0.01 --signals "café.omega" --csv "$TMP/nfd.csv"
check "the id is kept in NFC" has_fixed "$(head -n1 "$TMP/nfd.csv")" "café.omega"
printf '{"duration": 0.01, "initial": {"cafe\\u0301.omega": 3}}' >"$TMP/nfd_scn.json"
run "$DG" sim "$TMP/nfd.json" --scenario "$TMP/nfd_scn.json"
check "a scenario's NFD name finds the NFC id" rc_is 0
check "a scenario's NFD name: its initial value taken" has "$OUT" 'café\.omega +3\.0'
run "$DG" validate "$INV/lookalike_ids.json"
check "two spellings of one id: refused" has_fixed "$OUT" \
  "block id is another block's once normalized (Unicode NFC; differs at character 4: U+0065 where the id has U+00E9)"
check "a Cyrillic lookalike: did you mean, with the difference" has_fixed "$OUT" \
  '/connections/0/1: unknown block "box"; did you mean "bоx"? (differs at character 2: U+006F where the id has U+043E)'

# ---- bounded input ---------------------------------------------------------------
python3 - "$TMP/big.json" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"drivegraph": 1, "description": "')
    chunk = "x" * (1 << 20)
    for _ in range(200):
        f.write(chunk)
    f.write('", "blocks": {"g": {"type": "gear", "ratio": 0}}, "connections": []}')
EOF
start=$(date +%s%N)
run "$DG" validate "$TMP/big.json"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "200 MB description: refused" rc_is 1
check "200 MB description: the limit named with its remedy" has_fixed "$OUT" \
  'big.json: the file is 209715302 bytes, over the limit of 16777216 bytes for graph and scenario texts (DRIVEGRAPH_MAX_INPUT_SIZE raises it)'
check "200 MB description: refused fast (${ms} ms)" [ "$ms" -lt 2000 ]
run /usr/bin/time -f '%M' "$DG" sim "$TMP/big.json" --duration 0.1
check "200 MB description: sim refuses it without reading it (${ERR##*$'\n'} kB)" \
  [ "${ERR##*$'\n'}" -lt 65536 ]
rm -f "$TMP/big.json"
run env DRIVEGRAPH_MAX_INPUT_SIZE=1k "$DG" validate "$ROOT/graphs/sedan_rwd_automatic.json"
check "a lower limit: an ordinary graph refused" has_fixed "$OUT" 'over the limit of 1024 bytes'
{ cat "$ROOT/graphs/scenarios/gear_train_pulse.json"; printf '%2000s\n' ''; } >"$TMP/padded.json"
run env DRIVEGRAPH_MAX_INPUT_SIZE=1k "$DG" sim "$ROOT/graphs/gear_train.json" \
  --scenario "$TMP/padded.json"
check "a lower limit: a scenario too" has_fixed "$ERR" \
  'padded.json: the file is 2096 bytes, over the limit of 1024 bytes'
run env DRIVEGRAPH_MAX_INPUT_SIZE=lots "$DG" validate "$ROOT/graphs/gear_train.json"
check "a limit that is not a size: named" has_fixed "$OUT" \
  'DRIVEGRAPH_MAX_INPUT_SIZE="lots" is not a size'
python3 -c 'import sys; sys.stdout.write("{\"drivegraph\": 1, \"x\": [" + ",".join(["[]"] * 600000) + "]}")' >"$TMP/dense.json"
run "$DG" validate "$TMP/dense.json"
check "600 000 empty arrays: refused before parsing" has_fixed "$OUT" \
  'would parse into about'

finish
