#!/usr/bin/env bash
# Tests of `drivegraph sim` presets, plots and summaries (tools/cmd_sim.c,
# tools/summary.c, tools/plot.c): outputs, numbers, files and exit codes.
# Run by meson as
#   test_cli_sim.sh <path-to-drivegraph> <source-root>
# (tests/test_cli.sh covers the scenario runs and the CSV.)
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

G=$ROOT/graphs

# Under LeakSanitizer: fontconfig (through cairo) and libltdl (PLplot's driver
# loader) keep process-lifetime caches that are never freed. Nothing of ours
# is suppressed.
printf 'leak:libfontconfig.so\nleak:libltdl.so\n' >"$TMP/lsan.supp"
export LSAN_OPTIONS="suppressions=$TMP/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

count_of() { grep -Ec -- "$2" <<<"$1" || true; }
at_least() { [[ $(count_of "$1" "$2") -ge $3 ]]; }
no_tmp_files() { [[ -z $(find "$1" -name '*.tmp' -print -quit) ]]; }
# num TEXT REGEX: the first capture group of the first line matching REGEX.
num() { sed -nE "s#$2#\\1#p" <<<"$1" | head -n1; }
# between X LO HI: LO <= X <= HI (X must be a number).
between() { [[ -n $1 ]] && awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
# near X Y TOL: |X - Y| <= TOL.
near() { [[ -n $1 && -n $2 ]] && awk -v x="$1" -v y="$2" -v t="$3" 'BEGIN { d = x - y; if (d < 0) d = -d; exit !(d <= t) }'; }
# py EXPR: evaluates a Python expression over the JSON on stdout (as `d`);
# passes when it is true. Prints nothing.
py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$TMP/stdout" 2>/dev/null; }
# pyval EXPR: prints the value of a Python expression over the JSON on stdout.
pyval() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$TMP/stdout" 2>/dev/null || true; }
is_png() { [[ $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; }
is_svg() { head -c 4096 "$1" | grep -q '<svg'; }
no_cr() { ! grep -q $'\r' "$1"; }
size_over() { [[ -f $1 && $(wc -c <"$1") -gt $2 ]]; }
png_height() { python3 -c "import struct,sys; print(struct.unpack('>II', open(sys.argv[1],'rb').read()[16:24])[1])" "$1"; }

# ---------------------------------------------------------------------------
# Usage

run "$DG" sim --help
check "sim --help: exit 0" rc_is 0
check "sim --help: documents --preset" has "$OUT" '--preset NAME'
check "sim --help: documents --plot" has "$OUT" '--plot FILE'
check "sim --help: documents --json" has "$OUT" '--json'
check "sim --help: documents --from-speed" has "$OUT" '--from-speed KMH'

# --digits: the CSV's significant digits; 17 reads back to the same doubles
for d in 0 18 x; do
  run "$DG" sim "$G/gear_train.json" --duration 0.05 --digits "$d"
  check "--digits $d: exit 2" rc_is 2
  check "--digits $d: says what is expected" has_fixed "$ERR" \
    "drivegraph sim: --digits: expected a whole number from 1 to 17 (got '$d')"
done
run "$DG" sim "$G/gear_train.json" --duration 0.05 --digits 17 --csv "$TMP/d17.csv" \
  --signals motor.omega
check "--digits 17: exit 0" rc_is 0
run "$DG" sim "$G/gear_train.json" --duration 0.05 --csv "$TMP/d10.csv" --signals motor.omega
v17=$(awk -F, 'NR == 3 { print $2 }' "$TMP/d17.csv")
v10=$(awk -F, 'NR == 3 { print $2 }' "$TMP/d10.csv")
check "--digits 17: the value as %.17g, the default as %.10g of the same double ($v17, $v10)" \
  python3 -c "import sys; a, b = sys.argv[1:]; x = float(a)
assert x != 0 and a == '%.17g' % x and b == '%.10g' % x and len(a.lstrip('0.')) >= 16" "$v17" "$v10"

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset lanch
check "unknown preset: exit 2" rc_is 2
check "unknown preset: did you mean" has "$ERR" "unknown preset 'lanch'; did you mean 'launch'\\?"

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --scenario "$G/scenarios/launch.json"
check "--scenario with --preset: exit 2" rc_is 2
check "--scenario with --preset: message" has "$ERR" '--scenario and --preset exclude each other'

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --from-speed 80
check "--from-speed with launch: exit 2" rc_is 2
run "$DG" sim "$G/sedan_rwd_automatic.json" --preset brake --from-speed fast
check "--from-speed not a number: exit 2" rc_is 2
check "--from-speed not a number: message" has "$ERR" "--from-speed: expected a speed in km/h > 0 \\(got 'fast'\\)"

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --plot "$TMP/p.pdf"
check "--plot .pdf: exit 2" rc_is 2
check "--plot .pdf: message" has "$ERR" "--plot: expected a file name ending in \\.png or \\.svg \\(got '.*p\\.pdf'\\)"
check "--plot .pdf: nothing written" no_file "$TMP/p.pdf"
run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --plot "$TMP/plotfile"
check "--plot without extension: exit 2" rc_is 2

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --plot
check "--plot without value: exit 2" rc_is 2

# ---------------------------------------------------------------------------
# launch: the flagship sedan (automatic, torque converter)

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --csv "$TMP/sedan.csv" \
  --plot "$TMP/sedan.png"
check "sedan launch: exit 0" rc_is 0
check "sedan launch: stopped by the goal" \
  has "$OUT" '^stopped: +preset launch: 400 m covered and 100 km/h reached$'
t100=$(num "$OUT" '^  0-100 km/h +([0-9.]+) s$')
# The scenario graphs/scenarios/launch.json reaches 100 km/h in 8.0 s with the
# throttle opened at 1.0-1.2 s: from the throttle, ~6.9 s. The preset opens it
# at t = 0 (engine at idle in both), so it must land near that; 6-8.5 s also
# brackets the force balance (330 N*m through a converter: traction-limited
# in first gear).
check "sedan launch: 0-100 km/h in 6-8.5 s (got $t100)" between "$t100" 6 8.5
t400=$(num "$OUT" '^  0-400 m +([0-9.]+) s at [0-9.]+ km/h$')
v400=$(num "$OUT" '^  0-400 m +[0-9.]+ s at ([0-9.]+) km/h$')
check "sedan launch: 0-400 m after 0-100 ($t400 s)" awk -v a="$t400" -v b="$t100" 'BEGIN { exit !(a > b + 3) }'
check "sedan launch: 400 m at 130-190 km/h (got $v400)" between "$v400" 130 190
check "sedan launch: top speed line" has "$OUT" '^  top speed +[0-9.]+ km/h at [0-9.]+ s$'
check "sedan launch: shift log header" has "$OUT" '^shifts: +[0-9]+ \(gearbox, starting in 1\)$'
check "sedan launch: shift log lines" at_least "$OUT" '^  shift at +[0-9.]+ s +[1-6] -> [1-6] +[0-9]+ rpm$' 3
check "sedan launch: first shift 1 -> 2" has "$OUT" '^  shift at +[0-9.]+ s +1 -> 2 +[0-9]+ rpm$'
rpm12=$(num "$OUT" '^  shift at +[0-9.]+ s +1 -> 2 +([0-9]+) rpm$')
# auto_rpm upshifts when the input reaches upshift_rpm = 6000; the engine
# gains ~3 rpm per 1 ms step in first gear, so 50 rpm is ample.
check "sedan launch: 1 -> 2 at the graph's 6000 rpm (got $rpm12)" near "$rpm12" 6000 50
check "sedan launch: no downshift" lacks "$OUT" '^  shift at .* ([2-6]) -> 1 '
check "sedan launch: peak wheel slip line" has "$OUT" '^wheel slip: +peak \|\(wR - v\)/v\| [0-9.e-]+ \(wheel_r[lr] at [0-9.]+ s; above 1 m/s\)$'
bal=$(num "$OUT" '^  balance error +[-0-9.e+]+ J \(([0-9.e+-]+) of the work in\)$')
check "sedan launch: energy balance closes to 1e-6 (got $bal)" between "$bal" 0 1e-6
check "sedan launch: summary keeps steps and ns per step" has "$OUT" '^wall time: .*ns per step\)$'
check "sedan launch: CSV written" test -s "$TMP/sedan.csv"
check "sedan launch: PNG written" is_png "$TMP/sedan.png"
check "sedan launch: PNG is not trivial (> 30 kB)" size_over "$TMP/sedan.png" 30000
check "sedan launch: no temporary files" no_tmp_files "$TMP"
check "sedan launch: plot path printed last" has "$(tail -n1 <<<"$OUT")" "^plot: +$TMP/sedan\\.png$"
check "sedan launch: no progress line when stderr is not a terminal" no_cr "$TMP/stderr"
# 6 panels (engine, speed, gear, converter slip, wheel slip, driver inputs):
# 90 + 70 + 6 x 230 px.
check "sedan launch: six panels" [ "$(png_height "$TMP/sedan.png")" = 1540 ]

# The same 0-100 time from the scenario, shifted by its throttle delay (1.1 s,
# the middle of the 1.0-1.2 s ramp): two drivers, one car.
run "$DG" sim "$G/sedan_rwd_automatic.json" --scenario "$G/scenarios/launch.json" --json
ts=$(pyval 'd["t_0_100_kmh_s"]')
check "sedan scenario vs preset: 0-100 agree within 0.5 s ($ts - 1.1 vs $t100)" \
  near "$(awk -v a="$ts" 'BEGIN { print a - 1.1 }')" "$t100" 0.5

# --json: one object with the same figures.
run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --json --plot "$TMP/sedan.svg"
check "launch --json: exit 0" rc_is 0
check "launch --json: one line on stdout" [ "$(wc -l <"$TMP/stdout")" -eq 1 ]
check "launch --json: parses" py 'isinstance(d, dict)'
check "launch --json: has the fields" py 'all(k in d for k in ["graph", "preset", "steps", "stop_reason", "t_0_100_kmh_s", "t_0_400_m_s", "v_400_m_kmh", "top_speed_kmh", "shifts", "peak_wheel_slip", "energy", "wall_time_s", "ns_per_step", "first_step_cpu_s", "plot"])'
check "launch --json: same 0-100 as the text" py "abs(d['t_0_100_kmh_s'] - $t100) < 0.006"
check "launch --json: preset and graph" py 'd["preset"] == "launch" and d["graph"].endswith("sedan_rwd_automatic.json")'
check "launch --json: shifts are upshifts with rpm" \
  py 'len(d["shifts"]) >= 3 and all(s["to"] == s["from"] + 1 and 5900 < s["rpm"] < 6100 for s in d["shifts"])'
check "launch --json: 400 m at more than 100 km/h" py 'd["v_400_m_kmh"] > 100 and d["t_0_400_m_s"] > d["t_0_100_kmh_s"]'
# the kinematic slip is not limited by the tyre model (its state is): the
# rear tyres of the sedan spin at up to about three times the road speed
check "launch --json: wheel slip, kinematic, positive and finite" py '0.1 < d["peak_wheel_slip"] < 10'
check "launch --json: energy balance" py 'd["energy"]["balance_error_relative"] < 1e-6 and d["energy"]["work_in_J"] > 1e6'
check "launch --json: no time to rest from rest" py 'd["time_to_rest_s"] is None'
check "launch --json: SVG written" is_svg "$TMP/sedan.svg"
check "launch --json: SVG is not trivial (> 30 kB)" size_over "$TMP/sedan.svg" 30000

# ---------------------------------------------------------------------------
# launch: manual gearbox with a pedal clutch, AWD, EV

run "$DG" sim "$G/hatchback_fwd_manual.json" --preset launch --json
check "hatchback launch: exit 0" rc_is 0
# 160 N*m, 1150 kg, FWD: the scenario with gentle shifts takes 13.5 s; the
# preset's full-throttle launch and 0.7 s shifts must be quicker but not
# implausibly (8-13.5 s).
check "hatchback launch: 0-100 km/h in 8-13.5 s ($(pyval 'd["t_0_100_kmh_s"]'))" \
  py '8 <= d["t_0_100_kmh_s"] <= 13.5'
check "hatchback launch: the engine did not stall" py 'd["final_values"]["engine.stalled"] == 0'
check "hatchback launch: starts in first" py 'd["start_gear"] == 1'
check "hatchback launch: the driver upshifts 1 -> 2 -> 3" \
  py '[(s["from"], s["to"]) for s in d["shifts"]][:2] == [(1, 2), (2, 3)]'
# The driver shifts at 0.96 x redline (6528 rpm) and the lever moves 0.1 s
# later with the throttle closed: the logged rpm is below the redline and
# above 5500.
check "hatchback launch: shift rpm below the 6800 redline" \
  py 'all(5500 < s["rpm"] < 6800 for s in d["shifts"])'

run "$DG" sim "$G/awd_lsd.json" --preset launch
check "awd launch: exit 0" rc_is 0
t=$(num "$OUT" '^  0-100 km/h +([0-9.]+) s$')
# docs/graphs.md, "Example graphs": 5.8 s with the scenario's 1.1 s throttle delay
# (4.7 s here; 5.05 s with the rigid shifts' interrupts).
check "awd launch: 0-100 km/h in 4.5-6 s (got $t)" between "$t" 4.5 6

run "$DG" sim "$G/ev_single_speed.json" --preset launch --plot "$TMP/ev.png"
check "ev launch: exit 0" rc_is 0
t=$(num "$OUT" '^  0-100 km/h +([0-9.]+) s$')
# docs/graphs.md, "Example graphs": 6.8 s with a 0.2 s throttle ramp.
check "ev launch: 0-100 km/h in 6-7.2 s (got $t)" between "$t" 6 7.2
check "ev launch: no gearbox, no shift log" lacks "$OUT" '^shifts:'
check "ev launch: PNG written" is_png "$TMP/ev.png"
# No gearbox, no clutch: motor, speed, wheel slip and driver inputs only.
check "ev launch: four panels" [ "$(png_height "$TMP/ev.png")" = 1080 ]

# ---------------------------------------------------------------------------
# coast and brake

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset coast --json
check "sedan coast: exit 0" rc_is 0
check "sedan coast: starts at 100 km/h" py 'abs(d["start_speed_kmh"] - 100) < 1e-6'
# 100 km/h is 2311 rpm in sixth (0.68 x 4.10, r = 0.32 m): above the
# 2000 rpm downshift speed, so the preset starts in sixth.
check "sedan coast: starts in sixth" py 'd["start_gear"] == 6'
check "sedan coast: the box downshifts" py 'len(d["shifts"]) >= 3 and all(s["to"] == s["from"] - 1 for s in d["shifts"])'
check "sedan coast: slows down" py 'd["final_speed_kmh"] < 20 and d["top_speed_kmh"] <= 100.0001'
check "sedan coast: ends creeping or at rest" py 'd["stop_reason"].startswith("preset coast: ")'
check "sedan coast: energy balance" py 'd["energy"]["balance_error_relative"] < 1e-6'

run "$DG" sim "$G/hatchback_fwd_manual.json" --preset coast --from-speed 60
check "hatchback coast from 60: exit 0" rc_is 0
check "hatchback coast from 60: start speed" has "$OUT" '^  start speed +60\.0 km/h$'
check "hatchback coast from 60: reaches 1 km/h" has "$OUT" '^  to 1 km/h +[0-9.]+ s over [0-9.]+ m \(mean [0-9.]+ m/s\^2\)$'
check "hatchback coast from 60: stop reason" has "$OUT" '^stopped: +preset coast: below 1 km/h$'

# Braking is limited by the brake torque: sum(brake_torque x share) / radius
# is the force at the wheels. Road load adds a little, wheel and driveline
# inertia take a little away: the mean deceleration is within 10 % of it.
brake_case() { # graph, estimated deceleration (m/s^2)
  run "$DG" sim "$G/$1.json" --preset brake --json
  check "$1 brake: exit 0" rc_is 0
  check "$1 brake: ends at rest" py 'd["stop_reason"] == "preset brake: at rest"'
  local a
  a=$(pyval '(d["start_speed_kmh"] / 3.6) / d["time_to_rest_s"]')
  check "$1 brake: mean deceleration $a near $2 m/s^2" near "$a" "$2" "$(awk -v x="$2" 'BEGIN { print 0.1 * x }')"
  check "$1 brake: stopping distance = v^2 / 2a within 10 %" \
    py 'abs(d["distance_to_rest_m"] - (d["start_speed_kmh"] / 3.6) ** 2 / (2 * (d["start_speed_kmh"] / 3.6) / d["time_to_rest_s"])) < 0.1 * d["distance_to_rest_m"]'
}
brake_case sedan_rwd_automatic "$(awk 'BEGIN { print 1200 * (2 * 0.4 + 2 * 0.6) / 0.32 / 1500 }')"
brake_case hatchback_fwd_manual "$(awk 'BEGIN { print 1000 * (2 * 0.65 + 2 * 0.35) / 0.30 / 1150 }')"
brake_case awd_lsd "$(awk 'BEGIN { print 1500 * (2 * 0.6 + 2 * 0.4) / 0.33 / 1650 }')"

run "$DG" sim "$G/ev_single_speed.json" --preset brake --from-speed 50
check "ev brake from 50: exit 0" rc_is 0
check "ev brake from 50: to rest" has "$OUT" '^  to rest +[0-9.]+ s over [0-9.]+ m'

# ---------------------------------------------------------------------------
# Plots of scenario runs adapt to the graph: a test rig gets one rpm panel.

run "$DG" sim "$G/gear_train.json" --scenario "$G/scenarios/gear_train_pulse.json" --plot "$TMP/rig.png"
check "rig plot: exit 0" rc_is 0
check "rig plot: PNG written" is_png "$TMP/rig.png"
check "rig plot: one panel" [ "$(png_height "$TMP/rig.png")" = 390 ]
check "rig summary: no performance section" lacks "$OUT" '^performance:'

# ---------------------------------------------------------------------------
# Errors: clear messages, exit 1, nothing half-written

run "$DG" sim "$G/gear_train.json" --preset launch --csv "$TMP/rig.csv" --plot "$TMP/rig2.png"
check "preset without a vehicle: exit 1" rc_is 1
check "preset without a vehicle: message" \
  has "$ERR" '^drivegraph sim: --preset launch: .*gear_train\.json has no vehicle block \(type "vehicle"\)'
check "preset without a vehicle: no CSV" no_file "$TMP/rig.csv"
check "preset without a vehicle: no plot" no_file "$TMP/rig2.png"
check "preset without a vehicle: no temporary files" no_tmp_files "$TMP"

run "$DG" sim "$TMP/missing.json" --preset launch --plot "$TMP/m.png"
check "missing graph: exit 1" rc_is 1
check "missing graph: named" has "$ERR" "^$TMP/missing\\.json: .*cannot read"
check "missing graph: no plot" no_file "$TMP/m.png"

printf 'this is not JSON\n' >"$TMP/notjson.json"
run "$DG" sim "$TMP/notjson.json" --preset launch
check "not JSON: exit 1" rc_is 1
check "not JSON: FILE:line:column" has "$ERR" "^$TMP/notjson\\.json:1:[0-9]+: "

printf '{ "drivegraph": 1, "blocks": [], "connections": [] }\n' >"$TMP/schema.json"
run "$DG" sim "$TMP/schema.json" --preset launch
check "wrong schema: exit 1" rc_is 1
check "wrong schema: FILE: /blocks: message" has "$ERR" "^$TMP/schema\\.json: /blocks: "

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --signals body.sped \
  --csv "$TMP/bad.csv" --plot "$TMP/bad.png"
check "unknown signal: exit 1" rc_is 1
check "unknown signal: did you mean" has "$ERR" 'unknown signal "body\.sped"; did you mean "body\.speed"\?'
check "unknown signal: no CSV" no_file "$TMP/bad.csv"
check "unknown signal: no plot" no_file "$TMP/bad.png"
check "unknown signal: no temporary files" no_tmp_files "$TMP"

run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --plot "$TMP/no/such/dir/p.png"
check "unwritable plot: exit 1" rc_is 1
check "unwritable plot: message" has "$ERR" "cannot write $TMP/no/such/dir/p\\.png"
check "unwritable plot: nothing written" no_file "$TMP/no"

mkdir "$TMP/dir.png"
run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --plot "$TMP/dir.png" --csv "$TMP/d.csv"
check "plot onto a directory: exit 1" rc_is 1
check "plot onto a directory: message" has "$ERR" "cannot write $TMP/dir\\.png: Is a directory"
check "plot onto a directory: no CSV" no_file "$TMP/d.csv"
check "plot onto a directory: no temporary files" no_tmp_files "$TMP"

# A run that fails mid-way (the speed overflows) leaves no plot either.
cat >"$TMP/diverge.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 1e-6, "torque": 1e300 },
              "ld":  { "type": "load", "inertia": 1e-6 } },
  "connections": [["src.out", "ld.in"]] }
EOF
run "$DG" sim "$TMP/diverge.json" --duration 100 --dt 1 --plot "$TMP/div.png" --json
check "diverging: exit 1" rc_is 1
check "diverging: no plot" no_file "$TMP/div.png"
check "diverging: no temporary files" no_tmp_files "$TMP"
check "diverging --json: nothing on stdout" test -z "$OUT"

# A step size RK4 cannot take is refused before the run, naming the shafts
# and a step size that works; --force runs it with a warning; the default
# 1 ms is fine.
run "$DG" sim "$G/awd_lsd.json" --preset launch --dt 0.02 --duration 1 --csv "$TMP/stiff.csv"
check "sim stiff dt: exit 1" rc_is 1
check "sim stiff dt: names block and dt" has "$ERR" \
  '^drivegraph sim: .*awd_lsd\.json: /blocks/wheel_f[lr]: step size 0\.02 s is too large for RK4.*use dt <= 0\.002 s'
check "sim stiff dt: says how to run it anyway" has_fixed "$ERR" 'not run (give --force to run it anyway)'
check "sim stiff dt: no CSV" no_file "$TMP/stiff.csv"
# (it diverges after 0.18 s: the mode really is unstable at 0.02 s)
run "$DG" sim "$G/awd_lsd.json" --preset launch --dt 0.02 --duration 0.1 --force
check "sim stiff dt --force: runs" rc_is 0
check "sim stiff dt --force: warning names block and dt" has "$ERR" \
  'warning: .*awd_lsd\.json: /blocks/wheel_f[lr]: step size 0\.02 s is too large for RK4.*use dt <= 0\.002 s'
run "$DG" sim "$G/awd_lsd.json" --preset launch --duration 1
check "sim default dt: no stiffness warning" lacks "$ERR" 'too large for RK4'
# The start: nothing given is the car at rest, and the header says what the
# start chose: an engine geared to the wheels (no clutch) on a body that
# nothing holds at rest stays at 0 rpm, its idle not taken
cat > "$TMP/geared.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": {
    "engine": { "type": "engine", "inertia": 0.15, "idle_rpm": 800, "redline_rpm": 6500,
                "full_load": { "rpm": [0, 6500], "torque": [100, 100] } },
    "final": { "type": "gear", "ratio": 12 },
    "wheel": { "type": "wheel", "radius": 0.3, "inertia": 1.0 },
    "body": { "type": "vehicle", "mass": 1200 } },
  "connections": [["engine.out", "final.in"], ["final.out", "wheel.hub"], ["wheel.ground", "body.rear"]] }
EOF
printf '{ "duration": 0.01, "dt": 0.001 }\n' > "$TMP/short.json"
run "$DG" sim "$TMP/geared.json" --scenario "$TMP/short.json"
check "start at rest: exit 0" rc_is 0
check "start at rest: header" has_fixed "$OUT" 'start:       speeds the start chose (no initial value fixed them):'
check "start at rest: the body at rest" has "$OUT" '^  body\.mass +0 m/s +at rest: no speed given \(body\)$'
check "start at rest: the engine's idle not taken" has "$OUT" '^  engine\.out +0 rad/s +idle 83\.78 rad/s of engine not taken: the speeds before fix it$'
run "$DG" sim "$TMP/geared.json" --scenario "$TMP/short.json" --json
check "start at rest --json: start_choices" py 'd["start_choices"][1]["block"] == "engine" and d["start_choices"][1]["taken"] is False and d["start_choices"][0]["speed"] == 0'

# validate --scenario checks the step the scenario runs at (sim's step),
# unless --dt says otherwise
printf '{ "duration": 1, "dt": 0.02 }\n' > "$TMP/coarse.json"
run "$DG" validate "$G/awd_lsd.json" --scenario "$TMP/coarse.json"
check "validate --scenario dt 0.02: exit 1" rc_is 1
check "validate --scenario dt 0.02: the step checked is the scenario's" has "$OUT" \
  'awd_lsd\.json: /blocks/wheel_f[lr]: step size 0\.02 s is too large for RK4.*use dt <= 0\.002 s'
run "$DG" validate "$G/awd_lsd.json" --scenario "$TMP/coarse.json" --dt 0.001
check "validate --scenario --dt 0.001: --dt wins" rc_is 0

# The energy ledger (docs/energy.md): a series hybrid's audit from the fuel
# and the battery to the road, as text and JSON; a motor on no battery
# shows its electricity as coming from outside the model.
run "$DG" sim "$G/series_hybrid.json" --scenario "$G/scenarios/series_hybrid_city.json" --duration 60
check "series hybrid: exit 0" rc_is 0
check "series hybrid: ledger heading" has "$OUT" '^ledger: +from the fuel and the batteries to the road$'
check "series hybrid: fuel line with grams and litres" has "$OUT" '^  fuel +engine +[0-9.e+]+ J  \([0-9.]+ g, [0-9.]+ L\)$'
check "series hybrid: battery line with the state of charge" has "$OUT" '^  battery +battery +[-0-9.e+]+ J  \(state of charge now 0\.[0-9]+\)$'
check "series hybrid: heat of each converter" at_least "$OUT" '^  heat +(engine|gen|motor|aux|battery) +-[0-9.e+]+ J$' 5
check "series hybrid: the bus balances" lacks "$OUT" 'on no battery'
led=$(num "$OUT" '^  balance error +[-0-9.e+]+ J \(([0-9.e+-]+) of the energy in\)$')
check "series hybrid: ledger closes to 1e-9 (got $led)" between "$led" 0 1e-9
run "$DG" sim "$G/series_hybrid.json" --scenario "$G/scenarios/series_hybrid_city.json" --duration 20 --json
check "series hybrid --json: ledger" py 'd["energy"]["ledger"]["fuel_J"] > 0 and d["energy"]["ledger"]["balance_error_relative"] < 1e-9 and d["energy"]["block_ledger_J"]["engine.fuel"] == d["energy"]["ledger"]["fuel_J"]'
run "$DG" sim "$G/ev_single_speed.json" --scenario "$G/scenarios/ev_launch_brake.json" --duration 3
check "EV on no battery: electricity from outside" has "$OUT" '^  electricity from outside +[0-9.e+]+ J  \(a machine or load on no battery\)$'
run "$DG" sim "$G/hatchback_fwd_manual.json" --preset launch --duration 1
check "hatchback (no fuel model): no ledger" lacks "$OUT" '^ledger:'
run "$DG" sim "$G/sedan_rwd_automatic.json" --preset launch --duration 1
check "sedan (its BSFC map): the fuel in the ledger" has "$OUT" '^  fuel     engine +[0-9.e+]+ J  \([0-9.]+ g, [0-9.]+ L\)$'

# --compile: the start mode's RK4 stage compiled (lib/solver/compile.c):
# the same CSV to the last digit, and a line saying how much it ran
run "$DG" sim "$G/compliant_driveline.json" --scenario "$G/scenarios/compliant_tipin.json" \
  --duration 1 --digits 17 --csv "$TMP/generic.csv"
check "compliant: generic run" rc_is 0
run "$DG" sim "$G/compliant_driveline.json" --scenario "$G/scenarios/compliant_tipin.json" \
  --duration 1 --digits 17 --csv "$TMP/compiled.csv" --compile
check "--compile: exit 0" rc_is 0
check "--compile: the same CSV, bit for bit" same_file "$TMP/generic.csv" "$TMP/compiled.csv"
check "--compile: how much it ran" has "$ERR" \
  '^drivegraph sim: --compile: the compiled stage ran [1-9][0-9]* of the run.s [1-9][0-9]* RK4 stages$'
# the cache on disk, across processes: the axle's unit (its torque curve a
# table, whose values the unit holds as constants, not their address) is
# loaded by the second process instead of compiled
run env DG_COMPILE_CACHE="$TMP/units" "$DG" sim "$G/bench/axle_baseline.json" --duration 0.1 \
  --digits 17 --csv "$TMP/axle1.csv" --compile
check "--compile, a new cache: exit 0" rc_is 0
check "--compile, a new cache: compiled" lacks "$ERR" 'from the cache'
check "--compile, a new cache: one unit kept" line_count_is "$(ls "$TMP/units")" 1
run env DG_COMPILE_CACHE="$TMP/units" "$DG" sim "$G/bench/axle_baseline.json" --duration 0.1 \
  --digits 17 --csv "$TMP/axle2.csv" --compile
check "--compile, the next process: exit 0" rc_is 0
check "--compile, the next process: loaded" has "$ERR" \
  '^drivegraph sim: --compile: its unit was loaded from the cache on disk \(no compiler run\)$'
check "--compile, the next process: the same CSV" same_file "$TMP/axle1.csv" "$TMP/axle2.csv"
run "$DG" sim "$G/imported/hmmwv_cvt.json" --duration 1 --compile
check "--compile, a mode not covered: exit 1" rc_is 1
check "--compile, a mode not covered: why" has "$ERR" \
  '^drivegraph sim: --compile: its current mode cannot be compiled: its mode has variable ratios \(not compiled yet\)$'
check "--compile, a mode not covered: not run" has "$ERR" '^drivegraph sim: not run$'
run env DG_CC=/nonexistent/cc "$DG" sim "$G/compliant_driveline.json" --duration 0.1 --compile
check "--compile without a compiler: exit 1" rc_is 1
check "--compile without a compiler: named" has "$ERR" \
  "^drivegraph sim: --compile: cannot run the C compiler '/nonexistent/cc' \\(set DG_CC\\)$"

finish
