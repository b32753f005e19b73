#!/usr/bin/env bash
# Tests of `drivegraph import` and of `validate` / `sim` taking a YAML config
# directly: outputs, messages, files and exit codes. Run by meson as
#   test_cli_import.sh <path-to-drivegraph> <source-root>
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

# awk_true FILE PROGRAM: the awk program (over a CSV) prints "yes".
awk_true() { [[ $(awk -F, "$2" "$1") == yes ]]; }

YAML=$ROOT/tests/data/yaml
CHRONO=$ROOT/tests/data/chrono
IMPORTED=$ROOT/graphs/imported
SEDAN=$YAML/powertrain_sedan.yaml
ENGINE=$CHRONO/hmmwv_engine_shafts.json
TRANS=$CHRONO/hmmwv_automatic_transmission_shafts.json
OK_LINE='ok \([0-9]+ blocks, [0-9]+ connections, [0-9]+ DOFs in the start mode, [0-9]+( of [0-9]+)? modes checked(: [0-9]+ built(, the others follow from [0-9]+ independent groups|; .*))?\)$'

# ---------------------------------------------------------------------------
# Usage

run "$DG" import --help
check "import --help: exit 0" rc_is 0
check "import --help: usage line" has "$OUT" '^usage: drivegraph import CONFIG\.yaml \| ENGINE\.json TRANSMISSION\.json'
check "import --help: documents --vehicle" has "$OUT" '--vehicle CONFIG'

run "$DG" --help
check "drivegraph --help lists import" has "$OUT" '^  import '

run "$DG" import
check "import without files: exit 2" rc_is 2
check "import without files: message" has "$ERR" '^drivegraph import: no input file given'

run "$DG" import a.json b.json c.json
check "import three files: exit 2" rc_is 2
check "import three files: message" has "$ERR" "at most two input files \\(got 'c\\.json' too\\)"

run "$DG" import "$ENGINE"
check "import one Chrono file: exit 2" rc_is 2
check "import one Chrono file: message" has "$ERR" 'needs the engine and the transmission file'

run "$DG" import "$SEDAN" --vehicle "$SEDAN"
check "import YAML with --vehicle: exit 2" rc_is 2

run "$DG" import "$SEDAN" --bogus
check "import unknown option: exit 2" rc_is 2
check "import unknown option: named" has "$ERR" "unknown option '--bogus'"

run "$DG" import "$SEDAN" -o
check "import -o without value: exit 2" rc_is 2

# ---------------------------------------------------------------------------
# YAML to a graph

run "$DG" import "$SEDAN"
check "import YAML to stdout: exit 0" rc_is 0
check "import YAML: pretty JSON, format version first" has "$OUT" '^  "drivegraph": 1,$'
check "import YAML: the automatic launch clutch" has "$OUT" '^      "mode": "auto",$'
check "import YAML: the torque map rows as given" has "$OUT" '^          \[180, 300, 330, 300, 250\]$'
check "import YAML: gear ratios as given" has "$OUT" '"ratios": \[3\.4, 2\.05, 1\.4, 1, 0\.82, 0\.68\]'
check "import YAML: nothing on stderr without --verbose" line_count_is "$ERR" 0
cp "$TMP/stdout" "$TMP/sedan_stdout.json"

run "$DG" import "$SEDAN" -o "$TMP/sedan.json"
check "import -o: exit 0" rc_is 0
check "import -o: nothing on stdout" line_count_is "$OUT" 0
check "import -o: same text as stdout" same_file "$TMP/sedan.json" "$TMP/sedan_stdout.json"
check "import -o: no temporary file left" no_file "$(ls "$TMP"/sedan.json.tmp* 2>/dev/null || echo "$TMP/none")"

run "$DG" validate "$TMP/sedan.json"
check "the converted graph validates" has "$OUT" "$OK_LINE"

run "$DG" import "$SEDAN" --verbose -o "$TMP/sedan.json"
check "import --verbose: notes the defaults taken" has "$ERR" "^$(re "$SEDAN"): note: mass not given: default sedan's mass 1500 kg$"
check "import --verbose: says what it wrote" has "$ERR" "wrote $(re "$TMP/sedan.json")"

run "$DG" import "$YAML/notes.yaml"
check "import: warnings without --verbose" has "$ERR" "^$(re "$YAML/notes.yaml"):6:1: warning: wheelbse: unknown key, ignored; did you mean \"wheelbase\"\\?$"
check "import: notes only with --verbose" lacks "$ERR" 'note:'
run "$DG" import "$YAML/notes.yaml" -v
check "import -v: notes of ignored keys, with their place" has "$ERR" "^$(re "$YAML/notes.yaml"):4:1: note: anti_dive_front: ignored \\(no suspension in a longitudinal simulation\\)$"

# Errors: file:line:column: key path: message; nothing written, an existing
# output left alone.
echo "previous contents" >"$TMP/keep.json"
run "$DG" import "$YAML/invalid/wrong_type.yaml" -o "$TMP/keep.json"
check "import a bad config: exit 1" rc_is 1
check "import a bad config: file:line:column: key: message" has "$ERR" "^$(re "$YAML/invalid/wrong_type.yaml"):4:15: powertrain\\.engine\\.idle_rpm: expected a number, got a string \"eight hundred\"$"
check "import a bad config: the output is untouched" has "$(cat "$TMP/keep.json")" '^previous contents$'
run "$DG" import "$YAML/invalid/non_monotonic_rpm.yaml" -o "$TMP/never.json"
check "import a non-monotonic map: exit 1" rc_is 1
check "import a non-monotonic map: message" has "$ERR" ':7:41: powertrain\.engine\.rpm_breaks\[3\]: rpm breakpoints must increase strictly: 3500 after 4000$'
check "import a non-monotonic map: nothing written" no_file "$TMP/never.json"
run "$DG" import /nonexistent/x.yaml
check "import a missing file: exit 1" rc_is 1
check "import a missing file: message" has "$ERR" '^/nonexistent/x\.yaml: cannot read file: No such file or directory$'
run "$DG" import "$SEDAN" -o /nonexistent/dir/out.json
check "import into a missing directory: exit 1" rc_is 1
check "import into a missing directory: message" has_fixed "$ERR" \
  'drivegraph import: cannot write /nonexistent/dir/out.json: No such file or directory'

# validate and sim take the YAML directly
run "$DG" validate "$SEDAN"
check "validate YAML: exit 0" rc_is 0
check "validate YAML: ok line" has "$OUT" "^$(re "$SEDAN"): $OK_LINE"
run "$DG" validate "$YAML/invalid/missing_torque_map.yaml" "$SEDAN"
check "validate a bad YAML: exit 1" rc_is 1
check "validate a bad YAML: the problem with its place" has "$OUT" ':4:5: powertrain\.engine\.torque_map: missing required key \(one row of torques per throttle break\)$'
check "validate a bad YAML: the good file still ok" has "$OUT" "^$(re "$SEDAN"): $OK_LINE"

# A full-throttle launch of the sample: upshifts at 6000 rpm, the rpm between
# the downshift speed and the redline after the first upshift, 100 km/h.
run "$DG" sim "$SEDAN" --scenario "$ROOT/graphs/scenarios/launch.json" --csv "$TMP/sedan.csv" \
  --signals engine.rpm,gearbox.gear,clutch.locked,body.speed
check "sim YAML: exit 0" rc_is 0
check "sim YAML: CSV header" has "$(head -1 "$TMP/sedan.csv")" '^t,engine\.rpm,gearbox\.gear,clutch\.locked,body\.speed$'
check "sim YAML: the clutch slips at the start, then locks" awk_true "$TMP/sedan.csv" \
  'NR > 1 && $2 > 1500 && $4 == 0 { slip = 1 } NR > 1 && $4 == 1 { lock = 1 } END { print (slip && lock) ? "yes" : "no" }'
check "sim YAML: upshifts 1 -> 2 -> 3 -> 4" awk_true "$TMP/sedan.csv" \
  'NR > 1 && $3 > g { g = $3 } END { print (g >= 4 ? "yes" : "no") }'
check "sim YAML: rpm in [2000, 6500] after the first upshift" awk_true "$TMP/sedan.csv" \
  'NR > 1 && $3 >= 2 { if ($2 < 2000 || $2 > 6500) bad = 1 } END { print bad ? "no" : "yes" }'
check "sim YAML: each upshift from >= 5900 rpm (one 10 ms row before it)" awk_true "$TMP/sedan.csv" \
  'NR > 2 && $3 > pg { if (prpm < 5900) bad = 1 } NR > 1 { pg = $3; prpm = $2 } END { print bad ? "no" : "yes" }'
check "sim YAML: reaches 100 km/h" awk_true "$TMP/sedan.csv" \
  'NR > 1 && $5 > 27.78 { fast = 1 } END { print fast ? "yes" : "no" }'

# The flat-torque config: a motor and a final drive
run "$DG" import "$YAML/vehicle_flat_torque.yaml"
check "import a config without powertrain: a motor" has "$OUT" '^      "type": "motor",$'
check "import a config without powertrain: its torque" has "$OUT" '^      "max_torque": 250,$'

# ---------------------------------------------------------------------------
# Chrono to a graph

run "$DG" import "$ENGINE" "$TRANS" -o "$TMP/hmmwv.json"
check "import Chrono: exit 0" rc_is 0
check "import Chrono: nothing on stderr" line_count_is "$ERR" 0
run "$DG" validate "$TMP/hmmwv.json"
check "import Chrono: the graph validates" has "$OUT" "$OK_LINE"
check "import Chrono: ratios inverted" has "$(cat "$TMP/hmmwv.json")" '"ratios": \[5, 2\.5, 1\.25\]'
check "import Chrono: the converter's capacity factors" has "$(cat "$TMP/hmmwv.json")" '"k": \[15, 15, 15, 16, 18, 35\]'

run "$DG" import "$TRANS" "$ENGINE" -v -o "$TMP/swapped.json"
check "import Chrono, files swapped: exit 0" rc_is 0
check "import Chrono, files swapped: same graph" same_file "$TMP/swapped.json" "$TMP/hmmwv.json"
check "import Chrono, files swapped: a note" has "$ERR" 'taken the other way round'

run "$DG" import "$ENGINE" "$TRANS" --vehicle "$YAML/vehicle_awd_lsd.yaml" -o "$TMP/hmmwv_awd.json"
check "import Chrono --vehicle: exit 0" rc_is 0
check "import Chrono --vehicle: the config's drive" has "$(cat "$TMP/hmmwv_awd.json")" '"centre": \{'
check "import Chrono --vehicle: the config's final drive" has "$(cat "$TMP/hmmwv_awd.json")" '^      "ratio": 3\.9,?$'

run "$DG" sim "$TMP/hmmwv.json" --scenario "$ROOT/graphs/scenarios/launch.json" --duration 20 \
  --csv "$TMP/hmmwv.csv" --signals gearbox.gear,body.speed
check "sim the Chrono HMMWV: exit 0" rc_is 0
check "sim the Chrono HMMWV: pulls away and shifts to third" awk_true "$TMP/hmmwv.csv" \
  'NR > 1 && $2 > g { g = $2 } END { print (g >= 3 && $3 > 10) ? "yes" : "no" }'

run "$DG" import "$CHRONO/vehicles/M113/powertrain/M113_EngineSimpleMap.json" \
  "$CHRONO/vehicles/M113/powertrain/M113_AutomaticTransmissionSimpleMap.json" -o "$TMP/m113.json"
check "import a Chrono file with trailing text: exit 0" rc_is 0
check "import a Chrono file with trailing text: a warning with its place" has "$ERR" 'M113_EngineSimpleMap\.json:29:3: warning: text after the end of the JSON document ignored$'

run "$DG" import "$CHRONO/invalid/engine_unknown_template.json" "$TRANS" -o "$TMP/never.json"
check "import an unknown template: exit 1" rc_is 1
check "import an unknown template: file:line:column and a suggestion" has "$ERR" 'engine_unknown_template\.json:4:13: Template: unknown engine template "EngineShaft"; did you mean "EngineShafts"\?$'
check "import an unknown template: nothing written" no_file "$TMP/never.json"
run "$DG" import "$ENGINE" "$CHRONO/invalid/trans_missing_ratios.json"
check "import a missing key: file:line:column" has "$ERR" 'trans_missing_ratios\.json:26:13: Gear Box: missing required key "Forward Gear Ratios"$'

# ---------------------------------------------------------------------------
# FASTSim's vehicle table

FS=$ROOT/tests/data/fastsim
run "$DG" import fastsim "$FS/FASTSim_py_veh_db.csv" --row 1 -o "$TMP/corolla.json"
check "import fastsim --row 1: exit 0" rc_is 0
check "import fastsim --row 1: the Corolla" has "$(cat "$TMP/corolla.json")" '"name": "2016 TOYOTA Corolla 4cyl 2WD \(FASTSim Conv\)"'
run "$DG" validate "$TMP/corolla.json"
check "import fastsim: the graph validates" has "$OUT" "$OK_LINE"
run "$DG" import fastsim "$FS/FASTSim_py_veh_db.csv" --name "2017 chevrolet bolt" -o "$TMP/bolt.json"
check "import fastsim --name: exit 0" rc_is 0
check "import fastsim --name: the Bolt, electric" has "$(cat "$TMP/bolt.json")" '"type": "battery"'
run "$DG" import fastsim "$FS/FASTSim_py_veh_db.csv" --row 17 --cycle "$FS/hwfet.csv"
check "import fastsim --cycle: the trace is the cycle's" has "$OUT" '"time": \[0, 1, 2, 3,'
run "$DG" import fastsim "$FS/FASTSim_py_veh_db.csv" --row 9 -o "$TMP/never.json"
check "import fastsim a hybrid: exit 1" rc_is 1
check "import fastsim a hybrid: the reason" has "$ERR" 'FASTSim_py_veh_db\.csv:10:24: veh_pt_type: HEV: hybrids are not imported: a FASTSim hybrid is its supervisory controller'
check "import fastsim a hybrid: nothing written" no_file "$TMP/never.json"
run "$DG" import fastsim "$FS/FASTSim_py_veh_db.csv" --row 99
check "import fastsim an unknown row: exit 1" rc_is 1
check "import fastsim an unknown row: message" has "$ERR" 'no row with selection 99 \(the file.s selections run from 1 to 68\)$'
run "$DG" import fastsim "$FS/invalid/garbage_number.csv" --row 1
check "import fastsim garbage: file:line:column, column and what is expected" has "$ERR" 'garbage_number\.csv:2:38: drag_coef: expected a number > 0, got "abc"'
run "$DG" import fastsim "$FS/FASTSim_py_veh_db.csv"
check "import fastsim without --row or --name: exit 2" rc_is 2
check "import fastsim without --row or --name: message" has "$ERR" 'needs one of --row N and --name NAME'
run "$DG" import fastsim "$FS/FASTSim_py_veh_db.csv" --row 1 --name x
check "import fastsim with --row and --name: exit 2" rc_is 2
run "$DG" import "$SEDAN" --row 1
check "--row outside import fastsim: exit 2" rc_is 2
run "$DG" import fastsim --columns
check "import fastsim --columns: exit 0" rc_is 0
# docs/import.md shows the column table as --columns prints it
awk '/^<!-- fastsim-columns -->$/{on=1; next} /^<!-- \/fastsim-columns -->$/{on=0} on' \
  "$ROOT/docs/import.md" >"$TMP/doc_columns.md"
printf '%s\n' "$OUT" >"$TMP/columns.md"
check "docs/import.md's column table is --columns'" same_file "$TMP/columns.md" "$TMP/doc_columns.md"
# graphs/imported: the Corolla and the Bolt, kept in sync (relative paths, as in docs/import.md)
for p in "fastsim_corolla 1" "fastsim_bolt 17"; do
  read -r name row <<<"$p"
  run bash -c "cd '$ROOT' && '$DG' import fastsim tests/data/fastsim/FASTSim_py_veh_db.csv --row $row -o '$TMP/$name.json'"
  check "graphs/imported/$name.json is up to date" same_file "$TMP/$name.json" "$IMPORTED/$name.json"
done

# ---------------------------------------------------------------------------
# graphs/imported: the examples, and their converted graphs kept in sync

for y in powertrain_sedan vehicle_awd_lsd vehicle_flat_torque; do
  run "$DG" import "$IMPORTED/$y.yaml" -o "$TMP/$y.json"
  check "graphs/imported/$y.json is up to date" same_file "$TMP/$y.json" "$IMPORTED/$y.json"
done
pairs=("hmmwv_shafts hmmwv_engine_shafts.json hmmwv_automatic_transmission_shafts.json"
  "uaz_simple_map uaz_engine_simple_map.json uaz_automatic_transmission_simple_map.json"
  "hmmwv_cvt HMMWV_EngineSimpleMap.json HMMWV_AutomaticTransmissionSimpleCVT.json")
for p in "${pairs[@]}"; do
  read -r name e t <<<"$p"
  # relative paths, as in docs/import.md's commands, so the text is the same
  run bash -c "cd '$IMPORTED' && '$DG' import chrono/$e chrono/$t -o '$TMP/$name.json'"
  check "graphs/imported/$name.json is up to date" same_file "$TMP/$name.json" "$IMPORTED/$name.json"
done
for f in "$IMPORTED"/*.json; do
  run "$DG" validate "$f"
  check "validate graphs/imported/$(basename "$f")" has "$OUT" "$OK_LINE"
done

finish
