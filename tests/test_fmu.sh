#!/usr/bin/env bash
# FMU export (issue 24): `drivegraph fmu` and the FMU runtime (fmu/).
#
# - The three example FMUs (examples/fmu) and their FMI cross-check files,
#   in both FMI versions (scripts/fmu-cross-check.py): every
#   modelDescription.xml validates against the official FMI 3.0.2 / 2.0.5
#   schemas (xmllint; tests/data/fmi, copied from the FMI standard), and the
#   project's importer (tests/fmu_import.c: minizip, dlopen, the standard's
#   calling sequence) stepping each FMU with <Model>_in.csv reproduces
#   <Model>_ref.csv, which `drivegraph sim` wrote, byte for byte, with no
#   allocation inside DoStep.
# - FMU states: got and set back mid-run, serialized into a new instance
#   and into another process: the rest of the run bit for bit; several
#   instances side by side, and two different FMUs in one process.
# - Parameters: a tunable and a fixed one set before the start equal
#   `drivegraph sim` of the graph edited by hand; a tunable one changed
#   mid-run and back changes nothing, changed for good it changes the run.
# - Errors: a diverging step is logged with the block and the time and
#   refused calls fail with a message (fmu_import --api-checks); the tool
#   refuses bad outputs, names and step sizes.
# - The binaries: only the FMI functions (and the tool's entry point)
#   exported; libjansson, libm and libc as their only dependencies.
# - FMI 2's input derivatives: a ramp between communication points follows
#   `drivegraph sim`'s schedule closely.
#
# Run by meson as  test_fmu.sh <drivegraph> <source-root> <fmu_import>
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"
IMPORT=$3
SCHEMAS=${DG_FMI_SCHEMAS:-$ROOT/tests/data/fmi}
BUILD=$(cd "$(dirname "$DG")" && pwd)
export DRIVEGRAPH_FMU_DIR=$BUILD/fmu

XMLLINT=${DG_XMLLINT:-xmllint}
command -v "$XMLLINT" >/dev/null || { echo "test_fmu: xmllint not found (Debian: libxml2-utils)"; exit 1; }

# ---- the example FMUs and their cross-check files --------------------------
XC=$TMP/xc
run python3 "$ROOT/scripts/fmu-cross-check.py" "$DG" "$XC"
check "cross-check files written" rc_is 0
dirs=$(find "$XC/fmus" -mindepth 6 -maxdepth 6 -type d | sort)
check "three models in two FMI versions" [ "$(lines_of "$dirs")" -eq 6 ]

for d in $dirs; do
  m=$(basename "$d")
  v=$(cut -d/ -f1 <<<"${d#"$XC"/fmus/}")
  v=${v%%.*}
  tag="$m FMI $v"
  check "$tag: the files of the cross-check rules" \
    test -f "$d/$m.fmu" -a -f "$d/${m}_ref.csv" -a -f "$d/${m}_ref.opt" -a -f "$d/${m}_in.csv"
  size=$(stat -c %s "$d/${m}_ref.csv")
  check "$tag: _ref.csv under 1 MB ($size bytes)" [ "$size" -lt 1000000 ]
  check "$tag: _ref.csv's header quoted, time first" \
    has "$(head -n1 "$d/${m}_ref.csv")" '^"time"(,"[^"]+")+$'
  check "$tag: _ref.opt has the required keys" \
    has "$(tr '\n' ' ' <"$d/${m}_ref.opt")" '^StartTime, 0.0 StopTime, [0-9.]+ StepSize, [0-9.e-]+ RelTol, '
  stop=$(sed -n 's/^StopTime, //p' "$d/${m}_ref.opt")
  check "$tag: _ref.csv ends at StopTime" \
    python3 -c "import sys; r=open('$d/${m}_ref.csv').read().split(); sys.exit(abs(float(r[-1].split(',')[0]) - $stop) > 1e-9)"

  mkdir -p "$TMP/x/$m$v"
  (cd "$TMP/x/$m$v" && python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall()" "$d/$m.fmu")
  xsd=$SCHEMAS/fmi$v/fmi${v}ModelDescription.xsd
  run "$XMLLINT" --noout --schema "$xsd" "$TMP/x/$m$v/modelDescription.xml"
  check "$tag: modelDescription.xml validates against the FMI $v schema" rc_is 0
  plat=$([[ $v == 3 ]] && echo x86_64-linux || echo linux64)
  check "$tag: the binary at binaries/$plat/$m.so" test -f "$TMP/x/$m$v/binaries/$plat/$m.so"
  check "$tag: the graph and the scenario in resources/" \
    test -f "$TMP/x/$m$v/resources/graph.json" -a -f "$TMP/x/$m$v/resources/scenario.json"

  check "$tag: _in.csv gives exactly the FMU's inputs" python3 - "$TMP/x/$m$v/modelDescription.xml" \
    "$d/${m}_in.csv" <<'PY'
import re, sys
xml = open(sys.argv[1]).read()
ins = re.findall(r'name="([^"]+)"[^>]*causality="input"', xml)
head = open(sys.argv[2]).readline().strip().replace('"', '').split(",")[1:]
sys.exit(0 if sorted(ins) == sorted(head) else 1)
PY
  outs=$(head -n1 "$d/${m}_ref.csv" | tr -d '"' | cut -d, -f2-)
  run "$IMPORT" "$d/$m.fmu" --in "$d/${m}_in.csv" --outputs "$outs" --out "$TMP/$m$v.csv" --xc \
    --count-alloc --quiet
  check "$tag: the importer runs it" rc_is 0
  check "$tag: its outputs are drivegraph sim's, bit for bit" same_file "$TMP/$m$v.csv" "$d/${m}_ref.csv"
  check "$tag: nothing allocated in DoStep" has "$OUT" '^allocations: (none in [0-9]+ steps|not counted)'

  run "$IMPORT" "$d/$m.fmu" --in "$d/${m}_in.csv" --quiet --state-at 0.5 --instances 2
  check "$tag: state set back and serialized mid-run, two instances: bit for bit" rc_is 0
  check "$tag: (the state test ran)" has "$OUT" '^state: set back and serialized'

  run "$IMPORT" "$d/$m.fmu" --in "$d/${m}_in.csv" --api-checks
  check "$tag: calls the standard forbids fail with a message" has "$OUT" '^api-checks: [0-9]+ passed'
done

# ---- a serialized state in another process -------------------------------------
# (at 0.5 s the converter slips: its tables, addresses in the binary's static
# data that differ from process to process, are in use)
for v in 3.0 2.0; do
  D=$(find "$XC/fmus/$v" -mindepth 5 -maxdepth 5 -type d -name SedanLaunch)
  run "$IMPORT" "$D/SedanLaunch.fmu" --in "$D/SedanLaunch_in.csv" --quiet \
    --save-state 0.5 "$TMP/state$v.bin" --out "$TMP/whole$v.csv"
  check "FMI $v: a state serialized to a file" rc_is 0
  run "$IMPORT" "$D/SedanLaunch.fmu" --in "$D/SedanLaunch_in.csv" --quiet \
    --load-state 0.5 "$TMP/state$v.bin" --out "$TMP/rest$v.csv"
  check "FMI $v: deserialized in another process" rc_is 0
  awk -F, 'NR > 1 && $1 + 0 > 0.500001' "$TMP/whole$v.csv" >"$TMP/whole_rest$v.csv"
  check "FMI $v: ... the rest of the run bit for bit" same_file "$TMP/rest$v.csv" "$TMP/whole_rest$v.csv"
done

# ---- two different FMUs in one process --------------------------------------
D3=$(find "$XC/fmus/3.0" -mindepth 5 -maxdepth 5 -type d -name SedanLaunch)
C2=$(find "$XC/fmus/2.0" -mindepth 5 -maxdepth 5 -type d -name CoupledClutches)
run "$IMPORT" "$D3/SedanLaunch.fmu" --in "$D3/SedanLaunch_in.csv" --xc --quiet \
  --outputs "$(head -n1 "$D3/SedanLaunch_ref.csv" | tr -d '"' | cut -d, -f2-)" \
  --companion "$C2/CoupledClutches.fmu" --out "$TMP/with_companion.csv"
check "an FMI 3 and an FMI 2 FMU in one process: exit 0" rc_is 0
check "an FMI 3 and an FMI 2 FMU in one process: the first unchanged" \
  same_file "$TMP/with_companion.csv" "$D3/SedanLaunch_ref.csv"

# ---- parameters --------------------------------------------------------------
SEDAN=$ROOT/graphs/sedan_rwd_automatic.json
EX=$ROOT/examples/fmu/SedanLaunch
SIG=body.speed,engine.rpm,gearbox.gear
"$DG" fmu "$SEDAN" -o "$TMP/Sedan.fmu" --scenario "$EX/scenario.json" --outputs "$SIG" >/dev/null
python3 - "$EX/scenario.json" "$EX/SedanLaunch_in.csv" "$TMP/sim_scn.json" <<'PY'
import csv, json, sys
scn = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))
scn["inputs"]["throttle"] = [[float(r[0]), float(r[1])] for r in rows[1:]]
scn["duration"] = 4
json.dump(scn, open(sys.argv[3], "w"))
PY
edit() { # edit GRAPH OUT BLOCK KEY VALUE
  python3 -c "import json,sys; g=json.load(open(sys.argv[1])); g['blocks'][sys.argv[3]][sys.argv[4]]=float(sys.argv[5]); json.dump(g,open(sys.argv[2],'w'))" "$@"
}
sim_csv() { # sim_csv GRAPH OUT
  "$DG" sim "$1" --scenario "$TMP/sim_scn.json" --signals "$SIG" --digits 17 --csv "$2" >/dev/null
}
fmu_csv() { # fmu_csv OUT [--set ...]
  local out=$1
  shift
  "$IMPORT" "$TMP/Sedan.fmu" --in "$EX/SedanLaunch_in.csv" --stop 4 --outputs "$SIG" \
    --out "$out" --quiet "$@"
}
sim_csv "$SEDAN" "$TMP/plain_sim.csv"
fmu_csv "$TMP/plain_fmu.csv"
check "sedan: the FMU is drivegraph sim" same_file "$TMP/plain_fmu.csv" "$TMP/plain_sim.csv"
# The FMU's steps keep what its outputs read: the sedan's above neither the
# work nor the angles (dg_sim_set_keep 0); with a shaft's angle among them,
# the angles, the same as drivegraph sim's to the bit.
ASIG=body.speed,engine.out.angle,final.out.angle
"$DG" fmu "$SEDAN" -o "$TMP/SedanAngle.fmu" --scenario "$EX/scenario.json" --outputs "$ASIG" \
  >/dev/null
"$DG" sim "$SEDAN" --scenario "$TMP/sim_scn.json" --signals "$ASIG" --digits 17 \
  --csv "$TMP/angle_sim.csv" >/dev/null
run "$IMPORT" "$TMP/SedanAngle.fmu" --in "$EX/SedanLaunch_in.csv" --stop 4 --outputs "$ASIG" \
  --out "$TMP/angle_fmu.csv" --quiet
check "sedan, outputs with angles: exit 0" rc_is 0
check "sedan, outputs with angles: the FMU is drivegraph sim" \
  same_file "$TMP/angle_fmu.csv" "$TMP/angle_sim.csv"
check "sedan, outputs with angles: they turn (not NaN)" python3 -c "
import csv, math, sys
r = list(csv.reader(open('$TMP/angle_fmu.csv')))
a = [float(x[2]) for x in r[1:]]
sys.exit(not (all(math.isfinite(v) for v in a) and a[-1] > 100))"
edit "$SEDAN" "$TMP/cda.json" body cda 0.8
sim_csv "$TMP/cda.json" "$TMP/cda_sim.csv"
run fmu_csv "$TMP/cda_fmu.csv" --set body.cda=0.8@-1
check "a tunable parameter set before the start: exit 0" rc_is 0
check "a tunable parameter set before the start is the edited graph, bit for bit" \
  same_file "$TMP/cda_fmu.csv" "$TMP/cda_sim.csv"
edit "$SEDAN" "$TMP/inertia.json" engine inertia 0.25
sim_csv "$TMP/inertia.json" "$TMP/inertia_sim.csv"
run fmu_csv "$TMP/inertia_fmu.csv" --set engine.inertia=0.25@-1
check "a fixed parameter set before the start is the edited graph, bit for bit" \
  same_file "$TMP/inertia_fmu.csv" "$TMP/inertia_sim.csv"
run fmu_csv "$TMP/back_fmu.csv" --set body.cda=3@2 --set engine.idle_rpm=900@2 \
  --set body.cda=0.65@2 --set engine.idle_rpm=800@2
check "tunable parameters changed mid-run and back: exit 0" rc_is 0
check "tunable parameters changed mid-run and back change nothing" \
  same_file "$TMP/back_fmu.csv" "$TMP/plain_fmu.csv"
run fmu_csv "$TMP/drag_fmu.csv" --set body.cda=3@2
check "a tunable parameter changed mid-run for good: exit 0" rc_is 0
check "... the same until then, slower after" python3 - "$TMP/plain_fmu.csv" "$TMP/drag_fmu.csv" <<'PY'
import sys
a = [l.split(",") for l in open(sys.argv[1]).read().split()[1:]]
b = [l.split(",") for l in open(sys.argv[2]).read().split()[1:]]
same = all(x == y for x, y in zip(a, b) if float(x[0]) <= 2.0 + 1e-9)
slower = float(b[-1][1]) < float(a[-1][1]) - 0.05
sys.exit(0 if same and slower else 1)
PY
run "$IMPORT" "$TMP/Sedan.fmu" --in "$EX/SedanLaunch_in.csv" --stop 1 --quiet \
  --set engine.inertia=0.3@0.5
check "a fixed parameter while running is refused" rc_is 1
check "... saying why" has_fixed "$ERR" 'parameter engine.inertia is fixed'
run "$IMPORT" "$TMP/Sedan.fmu" --in "$EX/SedanLaunch_in.csv" --stop 1 --quiet \
  --set engine.idle_rpm=-5@0.5
check "a tunable parameter out of its range is discarded" rc_is 1
check "... with the loader's message" has "$ERR" 'Discard|idle_rpm'

# ---- no scenario: every channel an input, the gear an integer ----------------------
MAN=$ROOT/graphs/hatchback_fwd_manual.json
MSIG=body.speed,engine.rpm,gearbox.gear,clutch.locked
printf '"time","throttle","brake","clutch","gear"\n0,0,0,1,0\n0.3,0,0,1,0\n0.3,0,0,1,1\n0.6,0,0,1,1\n0.6,0.8,0,0.5,1\n1,0.8,0,0.5,1\n1,0.8,0,0,1\n2.5,0.8,0,0,1\n2.5,0,0,1,1\n2.7,0,0,1,1\n2.7,0,0,1,2\n2.9,0,0,1,2\n2.9,0.8,0,0,2\n4,0.8,0,0,2\n' >"$TMP/manual_in.csv"
python3 - "$TMP/manual_in.csv" "$TMP/manual_scn.json" <<'PY'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))
scn = {"duration": 4, "dt": 0.001, "output_interval": 0.01, "inputs": {}}
for k, n in enumerate(rows[0][1:]):
    scn["inputs"][n] = [[float(r[0]), int(r[k + 1]) if n == "gear" else float(r[k + 1])]
                        for r in rows[1:]]
json.dump(scn, open(sys.argv[2], "w"))
PY
"$DG" sim "$MAN" --scenario "$TMP/manual_scn.json" --signals "$MSIG" --digits 17 \
  --csv "$TMP/manual_sim.csv" >/dev/null
for v in 3 2; do
  run "$DG" fmu "$MAN" -o "$TMP/Manual$v.fmu" --fmi $v --outputs "$MSIG"
  check "FMI $v without a scenario: the pedals, the gear, the road are inputs" \
    has "$OUT" 'inputs \(throttle, clutch, gear, brake, grade, lateral_accel\)'
  (cd "$TMP" && rm -rf mx && mkdir mx && cd mx &&
    python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall()" "../Manual$v.fmu")
  check "FMI $v: the gear is an integer input" \
    has "$(cat "$TMP/mx/modelDescription.xml")" "$([[ $v == 3 ]] && echo '<Int32 name="gear"' || echo '<Integer')"
  run "$IMPORT" "$TMP/Manual$v.fmu" --in "$TMP/manual_in.csv" --stop 4 --outputs "$MSIG" \
    --out "$TMP/manual_fmu$v.csv" --quiet
  check "FMI $v: a manual launch with shifts, gear as an integer: sim's, bit for bit" \
    same_file "$TMP/manual_fmu$v.csv" "$TMP/manual_sim.csv"
done

# ---- a step that fails: the block and the time -------------------------------
run "$DG" fmu "$ROOT/graphs/compliant_driveline.json" -o "$TMP/Stiff.fmu" \
  --scenario "$ROOT/graphs/scenarios/compliant_tipin.json" --dt 0.05 --outputs body.speed
check "an internal step RK4 cannot take is refused" rc_is 1
check "... naming the block and a step that works" has "$ERR" 'shaft_[lr].*use dt <= '
run "$DG" fmu "$ROOT/graphs/compliant_driveline.json" -o "$TMP/Stiff.fmu" \
  --scenario "$ROOT/graphs/scenarios/compliant_tipin.json" --dt 0.05 --outputs body.speed --force
check "--force exports it anyway" rc_is 0
run "$IMPORT" "$TMP/Stiff.fmu" --step 0.05 --stop 2 --quiet
check "the diverging step fails" rc_is 1
check "... logged with the block and the time" \
  has "$ERR" 'logStatusError: the step from t = [0-9.]+ s failed: block "shaft_[lr]": simulation diverged'

# ---- the tool's refusals ---------------------------------------------------------
run "$DG" fmu "$SEDAN" -o "$TMP/S.fmu" --outputs body.sped
check "an unknown output: exit 1" rc_is 1
check "... with a suggestion" has_fixed "$ERR" 'output "body.sped": no such signal; did you mean "body.speed"?'
check "... and no file" no_file "$TMP/S.fmu"
run "$DG" fmu "$SEDAN" -o "$TMP/9lives.fmu"
check "a name that is no C identifier: usage error" rc_is 2
run "$DG" fmu "$SEDAN" -o "$TMP/noext.zip"
check "a name without .fmu: usage error" rc_is 2
run "$DG" fmu "$SEDAN"
check "no -o: usage error" rc_is 2
run "$DG" fmu "$SEDAN" -o "$TMP/Bad.fmu" --scenario "$ROOT/graphs/scenarios/coupled_clutches.json"
check "a scenario of another graph: exit 1" rc_is 1
check "... every problem named" has "$ERR" 'coupled_clutches.json: /initial'
cat >"$TMP/short.json" <<'JSON'
{ "drivegraph": 1,
  "blocks": {
    "eng": { "type": "torque_source", "inertia": 0.2, "torque": 50 },
    "sd":  { "type": "spring_damper", "stiffness": 1000, "damping": 1 },
    "g":   { "type": "gear", "ratio": 1 },
    "ld":  { "type": "load", "inertia": 2.0 } },
  "connections": [["eng.out", "sd.in", "g.in"], ["sd.out", "g.out", "ld.in"]] }
JSON
run "$DG" fmu "$TMP/short.json" -o "$TMP/Short.fmu" --outputs ld.omega
check "a graph with warnings exports" rc_is 0
check "... and the warnings are shown" \
  has_fixed "$ERR" 'drivegraph fmu: warning: '"$TMP"'/short.json: /blocks/sd: spring_damper "sd" can never act'
run env DRIVEGRAPH_FMU_DIR=/nonexistent "$DG" fmu "$SEDAN" -o "$TMP/S.fmu" --outputs body.speed
if [[ -f $BUILD/fmu/libdgfmu3.so ]]; then
  check "DRIVEGRAPH_FMU_DIR first, then the build tree's fmu/" rc_is 0
fi

# ---- FMI 2 input derivatives: a ramp inside the steps --------------------------
SP=$ROOT/examples/fmu/Spindles
"$DG" fmu "$SP/graph.json" -o "$TMP/Ramp.fmu" --fmi 2 --scenario "$SP/scenario.json" \
  --outputs diff.left.torque,engine.rpm,gearbox.gear >/dev/null
printf '"time","throttle","spindle_left","spindle_right"\n0,0.6,0,0\n2,0.6,20,21\n' >"$TMP/ramp_in.csv"
python3 - "$SP/scenario.json" "$TMP/ramp_in.csv" "$TMP/ramp_scn.json" <<'PY'
import csv, json, sys
scn = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))
for k, name in enumerate(rows[0][1:]):
    scn["inputs"][name] = [[float(r[0]), float(r[k + 1])] for r in rows[1:]]
scn["duration"] = 2
json.dump(scn, open(sys.argv[3], "w"))
PY
"$DG" sim "$SP/graph.json" --scenario "$TMP/ramp_scn.json" --digits 17 --csv "$TMP/ramp_sim.csv" \
  --signals diff.left.torque,engine.rpm,gearbox.gear >/dev/null
run "$IMPORT" "$TMP/Ramp.fmu" --in "$TMP/ramp_in.csv" --stop 2 --derivatives --quiet \
  --outputs diff.left.torque,engine.rpm,gearbox.gear --out "$TMP/ramp_fmu.csv"
check "FMI 2 with input derivatives: exit 0" rc_is 0
run "$IMPORT" "$TMP/Ramp.fmu" --in "$TMP/ramp_in.csv" --stop 2 --quiet \
  --outputs diff.left.torque,engine.rpm,gearbox.gear --out "$TMP/ramp_held.csv"
check "FMI 2 with input derivatives follows the ramp (held inputs do not)" \
  python3 - "$TMP/ramp_sim.csv" "$TMP/ramp_fmu.csv" "$TMP/ramp_held.csv" <<'PY'
import sys
def rows(p):
    return [[float(x) for x in l.split(",")] for l in open(p).read().split()[1:]]
s, d, h = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
def worst(a):  # the engine speed's largest difference, rpm
    return max(abs(x[2] - y[2]) for x, y in zip(s, a))
print(f"derivatives: {worst(d):.3g} rpm, held: {worst(h):.3g} rpm")
sys.exit(0 if worst(d) < 1e-6 * 6500 and worst(h) > 10 * worst(d) else 1)
PY

# ---- the binaries ------------------------------------------------------------------
for v in 3 2; do
  lib=$BUILD/fmu/libdgfmu$v.so
  # (a sanitizer build adds its runtimes)
  needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev '^lib(asan|ubsan)\.' |
    sort | tr '\n' ' ')
  check "libdgfmu$v.so needs libc, libjansson and libm only ($needed)" \
    [ "$needed" == "libc.so.6 libjansson.so.4 libm.so.6 " ]
  others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v "^fmi$v" | sort | tr '\n' ' ')
  check "libdgfmu$v.so exports the FMI $v functions and the tool's two only ($others)" \
    [ "$others" == "drivegraph_fmu_describe drivegraph_fmu_free " ]
done

finish
