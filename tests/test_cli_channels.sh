#!/usr/bin/env bash
# Channels and bindings on the command line (issue 11): the CSV carries the
# channels, --signals and --input take channel names, validate and sim
# check a scenario against the graph's bindings before any run (every
# problem at once), and the presets refuse graphs whose channels they
# cannot drive (issue 13: found by structure, never guessed). Run by meson
# as  test_cli_channels.sh <path-to-drivegraph> <source-root>
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

PICKUP=$ROOT/graphs/pickup_4x4.json
BRAKES=$ROOT/graphs/brake_per_wheel.json
SCN=$ROOT/graphs/scenarios

# ---- the CSV and --signals ----
run "$DG" sim "$PICKUP" --scenario "$SCN/pickup_reverse_low.json" --duration 0.1 \
  --csv "$TMP/all.csv"
check "sim: exit 0" rc_is 0
header=$(head -n1 "$TMP/all.csv")
check "CSV: every channel after the signals, the bound one too" \
  has "$header" ',body\.stopped,throttle,brake,clutch,gear,.*range'
check "CSV: the channel range holds the scenario's 2" \
  [ "$(python3 -c "import csv,sys; r=list(csv.DictReader(open('$TMP/all.csv'))); print(r[-1]['range'])")" == 2 ]

run "$DG" sim "$PICKUP" --scenario "$SCN/pickup_reverse_low.json" --duration 0.1 \
  --csv "$TMP/some.csv" --signals engine.rpm,range,throttle
check "--signals with channels: exit 0" rc_is 0
check "--signals with channels: the columns asked for" \
  [ "$(head -n1 "$TMP/some.csv")" == "t,engine.rpm,range,throttle" ]
run "$DG" sim "$PICKUP" --scenario "$SCN/pickup_reverse_low.json" --duration 0.1 \
  --csv "$TMP/bad.csv" --signals rnage
check "--signals: an unknown channel is refused" rc_is 1
check "--signals: and named" has_fixed "$ERR" 'unknown channel "rnage"'

# ---- --input ----
run "$DG" sim "$PICKUP" --scenario "$SCN/pickup_reverse_low.json" --duration 0.1 \
  --input range=1 --csv "$TMP/in.csv" --signals transfer.gear,range
check "--input: replaces the scenario's schedule" rc_is 0
check "--input: the transfer case follows it" \
  [ "$(tail -n1 "$TMP/in.csv")" == "0.1,1,1" ]
run "$DG" sim "$PICKUP" --scenario "$SCN/pickup_reverse_low.json" --duration 0.1 \
  --input rnage=1 --input range=1.5 --input range
check "--input: bad ones refused" rc_is 1
check "--input: an unknown channel with a suggestion" has_fixed "$ERR" 'no channel "rnage"; did you mean "range"?'
check "--input: an integer channel given a fraction" has_fixed "$ERR" '--input range: must be an integer (a gear), got 1.5'
check "--input: no value" has_fixed "$ERR" "expected NAME=VALUE with a finite number (got 'range')"

# ---- scenarios checked against the graph, every problem at once ----
cat >"$TMP/missing.json" <<'JSON'
{ "duration": 1, "inputs": { "brake_fr": [[0, 0]], "brak_rl": [[0, 0]] },
  "initial": { "body.sped": 3 } }
JSON
for cmd in "validate" "sim"; do
  if [[ $cmd == validate ]]; then
    run "$DG" validate "$BRAKES" --scenario "$TMP/missing.json"
  else
    run "$DG" sim "$BRAKES" --scenario "$TMP/missing.json"
  fi
  all="$OUT$ERR"
  check "$cmd --scenario: refused" rc_is 1
  check "$cmd --scenario: the unknown channel" has_fixed "$all" '/inputs/brak_rl: unknown input; did you mean "brake_rl"?'
  check "$cmd --scenario: every missing channel" \
    [ "$(grep -c 'is not given, but the graph' <<<"$all")" -eq 3 ]
  check "$cmd --scenario: where the graph binds it" has_fixed "$all" \
    'channel "brake_fl" is not given, but the graph '
  check "$cmd --scenario: the unknown signal" has_fixed "$all" '/initial/body.sped: unknown signal; did you mean "body.speed"?'
done
run "$DG" validate "$BRAKES" --scenario "$SCN/brake_front_left.json"
check "validate --scenario: a fitting scenario passes" rc_is 0

# ---- presets on graphs with channels of their own ----
run "$DG" sim "$PICKUP" --preset launch
check "preset: a channel the preset does not drive is refused" rc_is 1
check "preset: and named with the remedy" has_fixed "$ERR" \
  'the graph binds the channel "range" (/blocks/transfer/inputs/gear), which the preset does not drive: give it with --input range=VALUE'
run "$DG" sim "$PICKUP" --preset launch --input range=1 --json
check "preset + --input: runs" rc_is 0
check "preset + --input: reaches 100 km/h" has "$OUT" '"t_0_100_kmh_s":[0-9]'
python3 - "$PICKUP" "$TMP/shared.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
del g["blocks"]["transfer"]["inputs"]
json.dump(g, open(sys.argv[2], "w"))
PY
run "$DG" sim "$TMP/shared.json" --preset coast
check "preset: two gearboxes on one lever refused" rc_is 1
check "preset: names both and the remedy" has_fixed "$ERR" \
  'gearboxes "gearbox", "transfer" all follow the channel "gear"'
run "$DG" sim "$PICKUP" --preset launch --input range=1 --input throttle=0.5
check "preset: --input on a channel it drives refused" has_fixed "$ERR" '--input throttle: the preset drives that channel'

# ---- sweep: the launch pattern refuses graphs whose channels it does not give ----
run "$DG" sweep "$PICKUP" --set body.mass=2300,2400 --duration 1
check "sweep without a scenario on a graph with its own channels: every variant refused" \
  has "$OUT$ERR" '0 ok, 2 failed'
check "sweep: says which channel and what to do" has_fixed "$ERR" \
  'the launch pattern gives throttle, brake, clutch and gear only, but the graph binds the channel "range": give a scenario that gives it'
run "$DG" sweep "$PICKUP" --set body.mass=2300,2400 --scenario "$SCN/pickup_launch_high.json" --duration 1
check "sweep with a scenario giving it: runs" has "$OUT$ERR" '2 ok, 0 failed'

finish
