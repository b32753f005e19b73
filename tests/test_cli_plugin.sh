#!/usr/bin/env bash
# Tests of `--plugin LIB.so` (tools/plugin.c, tools/cmd_validate.c,
# tools/cmd_sim.c) with the example block examples/retarder. Run by meson as
#   test_cli_plugin.sh <path-to-drivegraph> <source-root>
# The plugin is looked for next to the drivegraph binary, in
# examples/retarder/ of its build directory (DG_RETARDER_PLUGIN overrides).
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

# near A B TOL: |A − B| <= TOL (numbers as printed).
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
# csv_col FILE NAME: the column number of NAME in FILE's header.
csv_col() { head -1 "$1" | tr ',' '\n' | grep -nx -- "$2" | cut -d: -f1; }
# csv_at FILE NAME T: the value of column NAME in the row whose t is T.
csv_at() {
  local c
  c=$(csv_col "$1" "$2")
  [[ -n $c ]] || return 1
  awk -F, -v c="$c" -v t="$3" 'NR > 1 && $1 + 0 == t + 0 { print $c; exit }' "$1"
}

GRAPH=$ROOT/examples/retarder/truck_retarder.json
SCENARIO=$ROOT/examples/retarder/descent.json
OK_LINE='ok \([0-9]+ blocks, [0-9]+ connections, [0-9]+ DOFs in the start mode, [0-9]+( of [0-9]+)? modes checked(: [0-9]+ built(, the others follow from [0-9]+ independent groups|; .*))?\)$'

# ---------------------------------------------------------------------------
# Where the built plugin is

BIN_DIR=$(cd "$(dirname "$DG")" && pwd)
if [[ -n ${DG_RETARDER_PLUGIN:-} ]]; then
  candidates=("$DG_RETARDER_PLUGIN")
else
  candidates=("$BIN_DIR/examples/retarder/libretarder.so" "$BIN_DIR/libretarder.so")
fi
PLUGIN=
for c in "${candidates[@]}"; do
  echo "# looking for the retarder plugin at $c"
  if [[ -f $c ]]; then
    PLUGIN=$c
    break
  fi
done
RC=0
: >"$TMP/stdout"
: >"$TMP/stderr"
check "the retarder plugin is built (ninja builds examples/retarder)" test -n "$PLUGIN"
if [[ -z $PLUGIN ]]; then
  echo "# not found: is subdir('examples/retarder') in meson.build, and was ninja run?"
  echo "$passed passed, $failed failed"
  exit 1
fi
echo "# using $PLUGIN"

# ---------------------------------------------------------------------------
# validate --plugin

run "$DG" validate --help
check "validate --help: documents --plugin" has "$OUT" '^  --plugin LIB\.so '

run "$DG" validate --plugin "$PLUGIN" "$GRAPH"
check "validate --plugin: exit 0" rc_is 0
check "validate --plugin: the ok line" has "$OUT" "^$(re "$GRAPH"): $OK_LINE"
# 11 blocks; 3 DOFs at the start: the engine, the gearbox input and the
# body (the clutch starts slipping, the gearbox in neutral until the gear
# input selects a gear: a graph alone has no inputs); the retarder adds no
# mode and no DOF (it is a ratio-1 link with inertia)
check "validate --plugin: block, connection and DOF counts" \
  has "$OUT" ": ok \\(11 blocks, 11 connections, 3 DOFs in the start mode, [0-9]+ modes checked(: [0-9]+ built, the others follow from [0-9]+ independent groups)?\\)$"
check "validate --plugin: nothing else" line_count_is "$OUT" 1
check "validate --plugin: quiet stderr" is_empty "$ERR"
modes_with=$(sed -nE 's/.* ([0-9]+) modes checked.*/\1/p' <<<"$OUT")
# the same truck with a plain flywheel in the retarder's place: same modes
sed '/"retarder": { "type": "retarder"/,/brake_blend/c\
    "retarder": { "type": "inertia", "inertia": 0.4 },' "$GRAPH" >"$TMP/flywheel.json"
run "$DG" validate "$TMP/flywheel.json"
check "a flywheel instead of the retarder: valid without the plugin" rc_is 0
modes_without=$(sed -nE 's/.* ([0-9]+) modes checked.*/\1/p' <<<"$OUT")
check "the retarder adds no modes ($modes_with with it, $modes_without with a flywheel)" \
  test -n "$modes_with" -a "$modes_with" = "$modes_without"

run "$DG" validate "$GRAPH" "--plugin=$PLUGIN"
check "validate FILE --plugin=LIB (option after the file): exit 0" rc_is 0
check "validate FILE --plugin=LIB: ok line" has "$OUT" "^$(re "$GRAPH"): $OK_LINE"

# the plugin adds to the built-in classes: other graphs still validate
run "$DG" validate --plugin "$PLUGIN" "$GRAPH" "$ROOT/graphs/gear_train.json"
check "validate --plugin with a built-in graph too: exit 0" rc_is 0
check "validate --plugin with a built-in graph too: two ok lines" line_count_is "$OUT" 2
check "validate --plugin with a built-in graph too: gear_train ok" \
  has "$OUT" "^$(re "$ROOT/graphs/gear_train.json"): $OK_LINE"

# without the plugin the type is unknown, at the block's type
run "$DG" validate "$GRAPH"
check "validate without --plugin: exit 1" rc_is 1
check "validate without --plugin: unknown block type at /blocks/retarder/type" \
  has "$OUT" "^$(re "$GRAPH"): /blocks/retarder/type: unknown block type \"retarder\""
check "validate without --plugin: no ok line" lacks "$OUT" 'ok \('

# the plugin's own checks (its parameter table and check hook) through the tool
sed 's/"full_torque_rpm": 1400,/"full_torque_rpm": 1400, "coefficient": 0.15,/' "$GRAPH" >"$TMP/both.json"
sed 's/"fill_time": 0.4,/"fill_time": -1,/' "$GRAPH" >"$TMP/negative.json"
run "$DG" validate --plugin "$PLUGIN" "$TMP/both.json" "$TMP/negative.json"
check "validate --plugin, bad retarder parameters: exit 1" rc_is 1
check "validate --plugin: the check hook's message" \
  has "$OUT" "^$(re "$TMP/both.json"): /blocks/retarder/full_torque_rpm: give coefficient or full_torque_rpm, not both$"
check "validate --plugin: the table's range message" \
  has "$OUT" "^$(re "$TMP/negative.json"): /blocks/retarder/fill_time: must be > 0 \\(got -1\\)$"

# ---------------------------------------------------------------------------
# plugins that cannot be used: exit 1, a message naming the plugin, no output

run "$DG" validate --plugin "$TMP/nonexistent/libnope.so" "$GRAPH"
check "bad plugin path: exit 1" rc_is 1
check "bad plugin path: message" \
  has "$ERR" "^drivegraph: plugin $(re "$TMP/nonexistent/libnope.so"): .*(No such file|cannot open)"
check "bad plugin path: nothing on stdout" is_empty "$OUT"

echo "not an ELF file" >"$TMP/garbage.so"
run "$DG" validate --plugin "$TMP/garbage.so" "$GRAPH"
check "plugin that is not a shared library: exit 1" rc_is 1
check "plugin that is not a shared library: message" \
  has "$ERR" "^drivegraph: plugin $(re "$TMP/garbage.so"): "

# a real shared library without the entry point: the libm drivegraph uses
NOENTRY=$(ldd "$DG" 2>/dev/null | awk '/libm\.so/ { print $3; exit }' || true)
if [[ -z $NOENTRY || ! -f $NOENTRY ]]; then
  NOENTRY=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true) |
    awk '/libm\.so\.6 / { print $NF; exit }')
fi
if [[ -z $NOENTRY || ! -f $NOENTRY ]]; then
  NOENTRY=$BIN_DIR/libdrivegraph.so # built beside the tool, no entry point either
fi
echo "# shared library without the entry point: $NOENTRY"
run "$DG" validate --plugin "$NOENTRY" "$GRAPH"
check "library without drivegraph_plugin_init: exit 1" rc_is 1
check "library without drivegraph_plugin_init: message" \
  has "$ERR" "^drivegraph: plugin $(re "$NOENTRY"): no function drivegraph_plugin_init \\(see docs/writing-blocks\\.md\\)$"
check "library without drivegraph_plugin_init: nothing on stdout" is_empty "$OUT"

# the entry point's own error (dg_registry_add refuses a second "retarder")
run "$DG" validate --plugin "$PLUGIN" --plugin "$PLUGIN" "$GRAPH"
check "same plugin twice: exit 1" rc_is 1
check "same plugin twice: the registry's message" \
  has "$ERR" "^drivegraph: plugin $(re "$PLUGIN"): block type \"retarder\" is already registered$"

run "$DG" validate "$GRAPH" --plugin
check "--plugin without a value: exit 2" rc_is 2
check "--plugin without a value: message" has "$ERR" "option '--plugin' requires an argument"

# ---------------------------------------------------------------------------
# sim --plugin (when the sim command has the option)

run "$DG" sim --help
if has "$OUT" '--plugin'; then
  CSV=$TMP/descent.csv
  run "$DG" sim "$GRAPH" --plugin "$PLUGIN" --scenario "$SCENARIO" --csv "$CSV" \
    --signals body.speed,retarder.fill,retarder.torque,retarder.command
  check "sim --plugin: exit 0" rc_is 0
  check "sim --plugin: CSV written" test -s "$CSV"
  check "sim --plugin: CSV header" \
    has "$(head -1 "$CSV" 2>/dev/null)" '^t,body\.speed,retarder\.fill,retarder\.torque,retarder\.command$'
  # the "retarder" input: 0 until 2 s (nothing filled, no torque), then the
  # stalk ramps to 1 by 2.2 s and the fill follows with tau = 0.4 s: at 6 s
  # it is within exp(-3.8/0.4) = 8e-5 of 1
  check "sim --plugin: command 0 at 1 s" near "$(csv_at "$CSV" retarder.command 1)" 0 1e-12
  check "sim --plugin: no fill at 1 s" near "$(csv_at "$CSV" retarder.fill 1)" 0 1e-12
  check "sim --plugin: no torque at 1 s" near "$(csv_at "$CSV" retarder.torque 1)" 0 1e-9
  check "sim --plugin: command 1 at 3 s" near "$(csv_at "$CSV" retarder.command 3)" 1 1e-12
  check "sim --plugin: full at 6 s" near "$(csv_at "$CSV" retarder.fill 6)" 1 1e-4
  # measured: the retarder brakes with ~2970 N*m on the propeller shaft
  # and holds the 40 t truck near 89 km/h (24.8 m/s) on the 6 % descent;
  # engine braking alone lets it reach 45 m/s (see test_retarder.c)
  check "sim --plugin: the retarder brakes at 60 s" \
    awk -v x="$(csv_at "$CSV" retarder.torque 60)" 'BEGIN { exit !(x < -2500 && x > -3200) }'
  check "sim --plugin: speed held on the descent" \
    awk -v x="$(csv_at "$CSV" body.speed 60)" 'BEGIN { exit !(x > 22.2 && x < 25.0) }'
  # the energy audit books the absorbed energy to the retarder (measured
  # -2.28e7 J) without the block computing it
  check "sim --plugin: the audit books negative work to the retarder" \
    has "$OUT" '^ +retarder +-[0-9.]+e\+0[67] J'

  rm -f "$CSV"
  run "$DG" sim "$GRAPH" --scenario "$SCENARIO" --csv "$CSV"
  check "sim without --plugin: exit 1" rc_is 1
  check "sim without --plugin: unknown block type" \
    has "$OUT$ERR" "/blocks/retarder/type: unknown block type \"retarder\""
  check "sim without --plugin: no CSV left behind" test ! -e "$CSV"

  run "$DG" sim "$GRAPH" --plugin "$NOENTRY" --scenario "$SCENARIO" --csv "$CSV"
  check "sim with a library without the entry point: exit 1" rc_is 1
  check "sim with a library without the entry point: message" \
    has "$ERR" "^drivegraph: plugin $(re "$NOENTRY"): no function drivegraph_plugin_init"
  check "sim with a bad plugin: no CSV left behind" test ! -e "$CSV"
else
  echo "# drivegraph sim has no --plugin option yet: sim checks skipped"
fi

finish
