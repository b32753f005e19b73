#!/usr/bin/env bash
# Tests of what every subcommand shares (issue 13, "no silent wrong
# answers"): the one option parser and the help printed from the same
# option tables (tools/tool.c), every graph form (JSON, YAML, --plugin) on
# every command that takes a graph, and the same key names and units in
# `sim --json` and `sweep`. Run by meson as
#   test_cli_options.sh <path-to-drivegraph> <source-root>
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

SEDAN=$ROOT/graphs/sedan_rwd_automatic.json
YAML=$ROOT/graphs/imported/powertrain_sedan.yaml
YAML_JSON=$ROOT/graphs/imported/powertrain_sedan.json
TRUCK=$ROOT/examples/retarder/truck_retarder.json
COMMANDS=(validate sim import dot blocks schema bench sweep)
py() { python3 -c "import json, sys; $1"; }

# ---------------------------------------------------------------------------
# Help and parsing from one table

for c in "${COMMANDS[@]}"; do
  run "$DG" "$c" --help
  check "$c --help: exit 0" rc_is 0
  # every option of the usage line has its line in the option list, and
  # the list has nothing the usage line lacks (but --help)
  usage_opts=$(sed -n '/^usage:/,/^$/p' <<<"$OUT" | grep -Eo '\[--[a-z-]+' | tr -d '[' | sort -u)
  list_opts=$(sed -n '/^Options:/,/^$/p' <<<"$OUT" | grep -Eo '^  (-[a-zA-Z], )?--[a-z-]+' |
    sed -E 's/^ +(-., )?//' | grep -vx -- --help | sort -u)
  check "$c --help: the usage line and the option list name the same options" \
    [ "$usage_opts" == "$list_opts" ]
  check "$c --help: -h, --help listed" has "$OUT" '^  -h, --help +show this help$'
  # every listed option is accepted by the parser: none is "unknown"
  for o in $list_opts; do
    run "$DG" "$c" "$o" 2>/dev/null
    check "$c $o: known to the parser" lacks "$ERR" "unknown option"
  done
  run "$DG" "$c" --no-such-option
  check "$c unknown option: exit 2" rc_is 2
  check "$c unknown option: named" has "$ERR" "^drivegraph $c: unknown option '--no-such-option'"
  check "$c unknown option: usage line" has "$ERR" "^usage: drivegraph $c"
done

run "$DG" sim "$SEDAN" --duratoin 1
check "misspelt option: exit 2" rc_is 2
check "misspelt option: did you mean" has "$ERR" "^drivegraph sim: unknown option '--duratoin'; did you mean '--duration'\\?$"
run "$DG" sweep "$SEDAN" --plugn x.so
check "misspelt --plugin: did you mean" has "$ERR" "unknown option '--plugn'; did you mean '--plugin'\\?"
run "$DG" sim "$SEDAN" --s x
check "ambiguous prefix: exit 2" rc_is 2
check "ambiguous prefix: both named" has "$ERR" "option '--s' is ambiguous \\(--scenario, --signals\\)"
run "$DG" sim "$SEDAN" --durat 0.01
check "unique prefix: accepted (as getopt_long did)" rc_is 0
run "$DG" sim "$SEDAN" --json=yes
check "value given to a flag: exit 2" rc_is 2
check "value given to a flag: message" has "$ERR" "option '--json' takes no argument"
run "$DG" bench "$SEDAN" --steps
check "missing argument: exit 2" rc_is 2
check "missing argument: message" has "$ERR" "^drivegraph bench: option '--steps' requires an argument$"
run "$DG" bench "$SEDAN" --reps 0
check "bad whole number: option, range and value" has "$ERR" "^drivegraph bench: --reps: expected a whole number from 1 to 1000 \\(got '0'\\)$"
run "$DG" sweep "$SEDAN" -j x
check "bad value of a short option: spelt as given" has "$ERR" "^drivegraph sweep: -j: expected a whole number from 1 to 1024 \\(got 'x'\\)$"
run "$DG" sim "$SEDAN" --from-speed fast --preset coast
check "bad number: unit named" has "$ERR" "--from-speed: expected a speed in km/h > 0 \\(got 'fast'\\)"
run "$DG" validate -x "$SEDAN"
check "unknown short option: named" has "$ERR" "^drivegraph validate: unknown option '-x'$"
run "$DG" validate --dt=0.001 -- "$SEDAN"
check "--name=value and -- before the operands" rc_is 0
run "$DG" import -vo "$TMP/sedan.json" "$YAML"
check "grouped short options with a value (-vo FILE)" rc_is 0
check "grouped short options: the file written" test -s "$TMP/sedan.json"

# ---------------------------------------------------------------------------
# YAML graphs on every command that takes a graph

run "$DG" validate "$YAML"
check "validate YAML: exit 0" rc_is 0
run "$DG" sim "$YAML" --preset launch --json
check "sim YAML --preset launch: exit 0" rc_is 0
check "sim YAML --preset launch: reaches 100 km/h" py 'd = json.load(sys.stdin); assert d["t_0_100_kmh_s"] > 0' <<<"$OUT"
YAML_LAUNCH=$OUT
run "$DG" sim "$YAML_JSON" --preset launch --json
check "sim YAML --preset launch: the run of the imported JSON" \
  py 'a, b = (json.loads(l) for l in sys.stdin); assert a["t_0_100_kmh_s"] == b["t_0_100_kmh_s"] and a["steps"] == b["steps"]' \
  <<<"$YAML_LAUNCH"$'\n'"$OUT"
run "$DG" sim "$YAML" --preset coast --from-speed 80
check "sim YAML --preset coast: exit 0" rc_is 0
check "sim YAML --preset coast: stops" has "$OUT" '^stopped: +preset coast'
run "$DG" sim "$YAML" --preset brake
check "sim YAML --preset brake: exit 0" rc_is 0
run "$DG" dot "$YAML"
check "dot YAML: exit 0" rc_is 0
check "dot YAML: a DOT graph" has "$OUT" '^digraph drivegraph \{'
run "$DG" dot "$YAML_JSON"
check "dot YAML: the DOT of the imported JSON (but the name)" \
  [ "$(grep -v 'label=<<B>' <<<"$OUT")" == "$(run "$DG" dot "$YAML"; grep -v 'label=<<B>' <<<"$OUT")" ]
run "$DG" bench "$YAML" --steps 200 --reps 1
check "bench YAML: exit 0" rc_is 0
check "bench YAML: the report" has "$OUT" '^ns per step: '
run "$DG" sweep "$YAML" --set engine.inertia=0.2,0.25 --duration 0.3 --signals body.speed
check "sweep YAML: exit 0" rc_is 0
check "sweep YAML: two lines" line_count_is "$OUT" 2
printf 'vehicle:\n  mass: [\n' >"$TMP/broken.yaml"
for c in validate sim dot bench sweep; do
  args=()
  [[ $c == sim ]] && args=(--preset launch)
  run "$DG" "$c" "$TMP/broken.yaml" "${args[@]}"
  check "$c broken YAML: exit 1" rc_is 1
  check "$c broken YAML: file, line and column" has "$OUT$ERR" "broken\\.yaml:[0-9]+:[0-9]+: "
done

# ---------------------------------------------------------------------------
# --plugin on every command where block types matter

find_retarder_plugin
RC=0
: >"$TMP/stdout"
: >"$TMP/stderr"
check "the retarder plugin is built" test -n "$PLUGIN"
if [[ -n $PLUGIN ]]; then
  for c in validate sim dot bench sweep blocks schema; do
    run "$DG" "$c" --help
    check "$c --help: documents --plugin" has "$OUT" '^  --plugin LIB\.so '
  done
  run "$DG" dot "$TRUCK" --plugin "$PLUGIN"
  check "dot --plugin: exit 0" rc_is 0
  check "dot --plugin: the retarder node" has "$OUT" 'retarder'
  run "$DG" bench "$TRUCK" --plugin "$PLUGIN" --steps 200 --reps 1
  check "bench --plugin: exit 0" rc_is 0
  check "bench --plugin: the report" has "$OUT" '^graph: .*truck_retarder\.json \(11 blocks'
  run "$DG" bench "$TRUCK" --steps 200 --reps 1
  check "bench without --plugin: exit 1" rc_is 1
  check "bench without --plugin: unknown type" has "$ERR" '/blocks/retarder/type: unknown block type "retarder"'
  run "$DG" sweep "$TRUCK" --plugin "$PLUGIN" --set retarder.max_torque=2000,3000 --duration 0.2 --signals retarder.fill
  check "sweep --plugin: exit 0" rc_is 0
  check "sweep --plugin: a line per variant" line_count_is "$OUT" 2
  check "sweep --plugin: the plugin's signal" has "$OUT" '"final_values":\{"retarder.fill":'
  run "$DG" sweep "$TRUCK" --plugin "$PLUGIN" --set retarder.max_torqe=2000 --duration 0.2
  check "sweep --plugin: a misspelt plugin parameter is named" has "$ERR" 'retarder/max_torqe: unknown parameter; did you mean "max_torque"'
  run "$DG" sweep "$TRUCK" --duration 0.2
  check "sweep without --plugin: exit 1" rc_is 1
  run "$DG" blocks --plugin "$PLUGIN" retarder
  check "blocks --plugin TYPE: exit 0" rc_is 0
  check "blocks --plugin TYPE: the plugin's reference" has "$OUT" '^retarder: '
  run "$DG" blocks --plugin "$PLUGIN"
  check "blocks --plugin: the built-in types too" has "$OUT" '^gear: '
  check "blocks --plugin: and the plugin's" has "$OUT" '^retarder: '
  run "$DG" blocks retarder
  check "blocks without --plugin: unknown type" rc_is 1
  run "$DG" schema --plugin "$PLUGIN"
  check "schema --plugin: exit 0" rc_is 0
  check "schema --plugin: the plugin's type" has "$OUT" '"retarder"'
  run "$DG" blocks --plugin "$TMP/none.so"
  check "blocks, a missing plugin: exit 1" rc_is 1
  check "blocks, a missing plugin: named" has "$ERR" "^drivegraph: plugin $(re "$TMP")/none\\.so: "
fi

# ---------------------------------------------------------------------------
# The same key names and units in sim --json and sweep

run "$DG" sim "$SEDAN" --duration 2 --json
check "sim --json: exit 0" rc_is 0
SIM_JSON=$OUT
run "$DG" sweep "$SEDAN" --duration 2 --signals body.speed
check "sweep: exit 0" rc_is 0
SWEEP_LINE=$OUT
# every key of a sweep line but its own (variant, overrides, error) is a
# key of sim --json at the same place: same name, same unit
keys_of() { py '
def walk(d, p=""):
    for k, v in d.items():
        if p == "final_values/": continue
        yield p + k
        if isinstance(v, dict): yield from walk(v, p + k + "/")
print("\n".join(sorted(walk(json.load(sys.stdin)))))'; }
missing=$(comm -23 <(keys_of <<<"$SWEEP_LINE" | grep -Evx 'variant|overrides|error') <(keys_of <<<"$SIM_JSON"))
check "sweep's keys are sim --json's (missing in sim: ${missing:-none})" is_empty "$missing"
check "sweep: the units are in the keys" has "$SWEEP_LINE" '"t_0_100_kmh_s":.*"top_speed_kmh":.*"final_time_s":.*"balance_error_J":'
check "sweep: no key without its unit" lacks "$SWEEP_LINE" '"(t_0_100|top_speed|final_time|balance_error|final)":'
# the same run (2 s of the sim's no-input run is not sweep's launch, so
# compare sweep against sim with sweep's launch pattern: a scenario)
cat >"$TMP/launch.json" <<'JSON'
{ "inputs": { "throttle": [[0, 1]], "gear": [[0, 1]] }, "duration": 2 }
JSON
run "$DG" sim "$SEDAN" --scenario "$TMP/launch.json" --json
SIM_JSON=$OUT
run "$DG" sweep "$SEDAN" --scenario "$TMP/launch.json" --signals body.speed
check "sweep and sim, one scenario: the same top speed in km/h and steps" \
  py 'a, b = (json.loads(l) for l in sys.stdin); assert abs(a["top_speed_kmh"] - b["top_speed_kmh"]) < 1e-9 * b["top_speed_kmh"] and a["steps"] == b["steps"] and a["topology_changes"] == b["topology_changes"], (a, b)' \
  <<<"$OUT"$'\n'"$SIM_JSON"

finish
