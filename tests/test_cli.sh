#!/usr/bin/env bash
# Tests of the `drivegraph` command (tools/main.c): outputs, files and
# exit codes. Run by meson as
#   test_cli.sh <path-to-drivegraph> <source-root>
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

OK_LINE='ok \([0-9]+ blocks, [0-9]+ connections, [0-9]+ DOFs in the start mode, [0-9]+( of [0-9]+)? modes checked(: [0-9]+ built(, the others follow from [0-9]+ independent groups|; .*))?\)$'

# ---------------------------------------------------------------------------
# Usage and help

run "$DG"
check "no arguments: exit 2 with usage" rc_is 2
check "no arguments: usage on stderr" has "$ERR" '^usage: drivegraph COMMAND'

run "$DG" --help
check "--help: exit 0" rc_is 0
check "--help: lists validate" has "$OUT" '^  validate '
check "--help: lists sim" has "$OUT" '^  sim '

run "$DG" help sim
check "help sim: shows sim options" has "$OUT" '--scenario FILE'

run "$DG" frobnicate
check "unknown command: exit 2" rc_is 2
check "unknown command: named" has "$ERR" "unknown command 'frobnicate'"

run "$DG" valdate x.json
check "misspelt command: suggestion" has "$ERR" "did you mean 'validate'\\?"

run "$DG" validate --help
check "validate --help: exit 0 and usage" has "$OUT" '^usage: drivegraph validate GRAPH\.\.\.'

run "$DG" sim --help
check "sim --help: exit 0" rc_is 0
check "sim --help: documents --signals" has "$OUT" '--signals LIST'

run "$DG" validate
check "validate without files: exit 2" rc_is 2
check "validate without files: message" has "$ERR" '^drivegraph validate: no graph file given'

run "$DG" validate --bogus x.json
check "validate unknown option: exit 2" rc_is 2
check "validate unknown option: named, with usage" \
  has "$ERR" "^drivegraph validate: unknown option '--bogus'"

run "$DG" sim
check "sim without graph: exit 2" rc_is 2

run "$DG" sim x.json --frobnicate
check "sim unknown option: exit 2" rc_is 2
check "sim unknown option: usage" has "$ERR" '^usage: drivegraph sim GRAPH'

run "$DG" sim x.json --dt abc
check "sim --dt not a number: exit 2" rc_is 2
check "sim --dt not a number: message" has "$ERR" "--dt: expected a number of seconds > 0 \\(got 'abc'\\)"

run "$DG" sim x.json --duration -1
check "sim negative --duration: exit 2" rc_is 2

run "$DG" sim x.json --scenario
check "sim --scenario without value: exit 2" rc_is 2
check "sim --scenario without value: message" has "$ERR" "option '--scenario' requires an argument"

run "$DG" sim a.json b.json --duration 1
check "sim two graphs: exit 2" rc_is 2

# ---------------------------------------------------------------------------
# validate: the example graphs

for name in gear_train open_diff_axle; do
  f="$ROOT/graphs/$name.json"
  run test -f "$f"
  check "graphs/$name.json exists" rc_is 0
done

shopt -s nullglob
for f in "$ROOT"/graphs/*.json; do
  run "$DG" validate "$f"
  check "validate $(basename "$f"): exit 0" rc_is 0
  check "validate $(basename "$f"): one ok line" has "$OUT" "^$(re "$f"): $OK_LINE"
  check "validate $(basename "$f"): nothing else" line_count_is "$OUT" 1
done

good=("$ROOT"/graphs/*.json)
if [[ ${#good[@]} -ge 2 ]]; then
  run "$DG" validate "${good[0]}" "${good[1]}"
  check "validate two good files: exit 0" rc_is 0
  check "validate two good files: two ok lines" line_count_is "$OUT" 2
fi

# validate's count of modes (docs/cli.md#validate), against hand counts.
# The sedan: converter 2 modes, gearbox 8, four wheels 3 each and the body 2
# = 2 · 8 · 81 · 2 = 2592 combinations in 3 groups (converter; gearbox;
# wheels and body, tied through the road and ground): 1 + 1 + 7 +
# (162 − 1) = 170 built.
run "$DG" validate "$ROOT/graphs/sedan_rwd_automatic.json"
check "validate sedan: 2592 modes, 170 built, 3 groups" \
  has "$OUT" ", 2592 modes checked: 170 built, the others follow from 3 independent groups\\)$"
# 13 clutches in a line between flywheels: 13 groups of one, 1 + 13 = 14
# built cover 2^13 = 8192.
clutches_json() { # $1: "line" or "side"
  local blocks='"eng": {"type": "torque_source", "inertia": 0.2}' conns="" ins="" outs=""
  for i in $(seq 0 12); do
    blocks+=", \"c$i\": {\"type\": \"clutch\", \"max_torque\": 100, \"inputs\": {\"pedal\": 0}}"
    blocks+=", \"j$i\": {\"type\": \"inertia\", \"inertia\": 0.1}"
    if [[ $1 == line ]]; then
      conns+="${conns:+, }[\"$([[ $i == 0 ]] && echo eng || echo j$((i - 1))).out\", \"c$i.in\"]"
      conns+=", [\"c$i.out\", \"j$i.in\"]"
    else
      ins+=", \"c$i.in\""
      outs+=", \"c$i.out\""
    fi
  done
  if [[ $1 == side ]]; then
    blocks='"eng": {"type": "torque_source", "inertia": 0.2}, "ld": {"type": "inertia", "inertia": 0.1}'
    for i in $(seq 0 12); do
      blocks+=", \"c$i\": {\"type\": \"clutch\", \"max_torque\": 100, \"inputs\": {\"pedal\": 0}}"
    done
    conns="[\"eng.out\"$ins], [\"ld.in\"$outs]"
  fi
  printf '{"drivegraph": 1, "blocks": {%s}, "connections": [%s]}\n' "$blocks" "$conns"
}
clutches_json line >"$TMP/c13_line.json"
run "$DG" validate "$TMP/c13_line.json"
check "validate 13 clutches in a line: exit 0" rc_is 0
check "validate 13 clutches in a line: all 8192 covered by 14 builds" \
  has "$OUT" ", 8192 modes checked: 14 built, the others follow from 13 independent groups\\)$"
# 13 clutches side by side between the same two shafts: one group of 8192,
# more than 4096; every combination with at most 6 locked is C(13,0) + ...
# + C(13,6) = 4096, and the line says so.
clutches_json side >"$TMP/c13_side.json"
run "$DG" validate "$TMP/c13_side.json"
check "validate 13 clutches side by side: exit 0" rc_is 0
check "validate 13 clutches side by side: how many of how many, and why" \
  has "$OUT" ", 4096 of 8192 modes checked: 4096 built; 13 switching blocks depend on each other \\(one group of 8192 combinations, more than the 4096 checked in full\\), so every combination with at most 6 of them away from their start modes was checked\\)$"

# ---------------------------------------------------------------------------
# validate: bad graphs

# A syntax error is reported as FILE:line:column.
printf '{\n  "drivegraph": 1,\n  "blocks": {,\n  "connections": []\n}\n' >"$TMP/syntax.json"
run "$DG" validate "$TMP/syntax.json"
check "syntax error: exit 1" rc_is 1
check "syntax error: FILE:line:column: message" has "$OUT" "^$(re "$TMP")/syntax\\.json:3:[0-9]+: [a-z]"
check "syntax error: one line" line_count_is "$OUT" 1

# Two independent problems, each on its own line with its JSON pointer.
cat >"$TMP/two.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "a": { "type": "nosuchblock" },
              "b": { "type": "load", "inertia": 1.0 } },
  "connections": [],
  "conections": [] }
EOF
run "$DG" validate "$TMP/two.json"
check "unknown type: exit 1" rc_is 1
check "unknown type: FILE: /blocks/a/type: message" \
  has "$OUT" "^$(re "$TMP")/two\\.json: /blocks/a/type: unknown block type \"nosuchblock\""
check "unknown key: FILE: /conections: did you mean" \
  has "$OUT" "^$(re "$TMP")/two\\.json: /conections: unknown key; did you mean \"connections\"\\?"
check "bad graph: no ok line" lacks "$OUT" ': ok \('

run "$DG" validate "$TMP/nonexistent.json"
check "missing file: exit 1" rc_is 1
check "missing file: named with the reason" has "$OUT" "^$(re "$TMP")/nonexistent\\.json: .*cannot read"

if [[ ${#good[@]} -ge 1 ]]; then
  run "$DG" validate "${good[0]}" "$TMP/syntax.json"
  check "good and bad: exit 1" rc_is 1
  check "good and bad: ok line for the good one" has "$OUT" "^$(re "${good[0]}"): $OK_LINE"
  check "good and bad: error line for the bad one" has "$OUT" "^$(re "$TMP")/syntax\\.json:3:"
fi

# The shared collection of invalid graphs: every one fails, with every line
# in the documented form. (Some need test-only block types, which the tool
# does not have; they still fail.)
for f in "$ROOT"/tests/data/invalid/*.json; do
  name=$(basename "$f")
  run "$DG" validate "$f"
  check "invalid/$name: exit 1" rc_is 1
  check "invalid/$name: no ok line" lacks "$OUT" '^[^ ]*: ok \('
  check "invalid/$name: every line is FILE: /path: text or FILE:line:column: text" \
    all_lines_match "$OUT" "^$(re "$f")(:[0-9]+:[0-9]+)?: [^ ]"
done

# Exact lines for some of them: case, then the line after the file name.
expected_lines=(
  'param_out_of_range|: /blocks/g/ratio: must be > 0 (got -1)'
  'param_out_of_range|: /blocks/g/efficiency: must be <= 1 (got 1.2)'
  'param_unknown_key|: /blocks/g/ratoi: unknown parameter; did you mean "ratio"?'
  'unknown_type|: /blocks/g/type: unknown block type "gera"; did you mean "gear"?'
  'duplicate_block|:3:3: duplicate object key "src"'
  'empty|:1:1: empty file, expected a JSON object'
)
for entry in "${expected_lines[@]}"; do
  name=${entry%%|*}
  f="$ROOT/tests/data/invalid/$name.json"
  [[ -f $f ]] || continue
  run "$DG" validate "$f"
  check "invalid/$name.json: prints '${entry#*|}'" grep -Fxq -- "$f${entry#*|}" "$TMP/stdout"
done

# ---------------------------------------------------------------------------
# sim

cat >"$TMP/graph.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "ld.in"]] }
EOF
cat >"$TMP/scn.json" <<'EOF'
{ "duration": 0.5, "dt": 0.001, "output_interval": 0.01,
  "inputs": { "throttle": [[0, 0], [0.1, 1]] } }
EOF

# numeric_csv FILE: every field after the header is a number.
numeric_csv() {
  awk -F, 'NR > 1 { for (i = 1; i <= NF; i++)
                     if ($i !~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) exit 1 }' "$1"
}
# times_exact FILE INTERVAL: row k (from 0) is at k * INTERVAL, to print precision.
times_exact() {
  awk -F, -v dt="$2" 'NR > 1 { k = NR - 2; if ($1 != sprintf("%.10g", k * dt)) exit 1 }' "$1"
}
same_width() { awk -F, -v n="$2" 'NF != n { exit 1 }' "$1"; }
rows_of() { echo $(($(wc -l <"$1") - 1)); }
rows_are() { [[ $(rows_of "$1") -eq $2 ]]; }
header_is() { [[ $(head -n1 "$1") == "$2" ]]; }

run "$DG" sim "$TMP/graph.json" --scenario "$TMP/scn.json" --csv "$TMP/out.csv"
check "sim: exit 0" rc_is 0
check "sim: CSV written" test -f "$TMP/out.csv"
check "sim: no temporary file left" no_file "$TMP/out.csv.tmp"
check "sim: header starts with t, lists signals, then the channels" \
  has "$(head -n1 "$TMP/out.csv" 2>/dev/null)" \
  '^t(,[A-Za-z0-9_]+\.[A-Za-z0-9_]+)+,throttle,brake,clutch,gear(,[A-Za-z0-9_-]+)*$'
check "sim: header has src.omega" has "$(head -n1 "$TMP/out.csv" 2>/dev/null)" ',src\.omega(,|$)'
check "sim: header has ld.rpm" has "$(head -n1 "$TMP/out.csv" 2>/dev/null)" ',ld\.rpm(,|$)'
check "sim: 51 rows for 0.5 s every 0.01 s" rows_are "$TMP/out.csv" 51
check "sim: every value is a number" numeric_csv "$TMP/out.csv"
check "sim: row times are multiples of 0.01" times_exact "$TMP/out.csv" 0.01
check "sim: summary gives the steps" has "$OUT" '^steps: +500 '
check "sim: summary says why it stopped" has "$OUT" '^stopped: +duration 0\.5 s reached'
check "sim: summary gives ns per step" has "$OUT" '^wall time: .*ns per step'

run "$DG" sim "$TMP/graph.json" --scenario "$TMP/scn.json" --csv "$TMP/sel.csv" \
  --signals ld.rpm,src.omega
check "sim --signals: exit 0" rc_is 0
check "sim --signals: header in the given order" header_is "$TMP/sel.csv" "t,ld.rpm,src.omega"
check "sim --signals: three columns per row" same_width "$TMP/sel.csv" 3
check "sim --signals: values are numbers" numeric_csv "$TMP/sel.csv"
# 10 N·m on 1.1 kg·m² from rest: ω(0.5 s) = 10/1.1 · 0.5 ≈ 4.545 rad/s.
check "sim --signals: the shaft speeds up" \
  awk -F, 'END { if (!($3 > 4.4 && $3 < 4.7)) exit 1 }' "$TMP/sel.csv"

run "$DG" sim "$TMP/graph.json" --scenario "$TMP/scn.json" --csv "$TMP/bad.csv" \
  --signals ld.rmp
check "sim unknown signal: exit 1" rc_is 1
check "sim unknown signal: named with a suggestion" \
  has "$ERR" 'unknown signal "ld\.rmp"; did you mean "ld\.rpm"\?'
check "sim unknown signal: no CSV" no_file "$TMP/bad.csv"
check "sim unknown signal: no temporary file" no_file "$TMP/bad.csv.tmp"

run "$DG" sim "$TMP/graph.json" --scenario "$TMP/scn.json" --csv "$TMP/short.csv" \
  --duration 0.2 --dt 0.002
check "sim --duration/--dt override: exit 0" rc_is 0
check "sim --duration 0.2: 21 rows" rows_are "$TMP/short.csv" 21
check "sim --dt 0.002: 100 steps" has "$OUT" '^steps: +100 of 0\.002 s'
check "sim override: row times exact" times_exact "$TMP/short.csv" 0.01

run "$DG" sim "$TMP/graph.json" --duration 0.1 --csv "$TMP/noscn.csv"
check "sim without scenario: exit 0" rc_is 0
check "sim without scenario: default interval 0.01 s" rows_are "$TMP/noscn.csv" 11

echo '{ "dt": 0.001 }' >"$TMP/nodur.json"
run "$DG" sim "$TMP/graph.json" --scenario "$TMP/nodur.json"
check "sim without any duration: exit 2" rc_is 2
check "sim without any duration: message" has "$ERR" 'no duration'

cat >"$TMP/stop.json" <<'EOF'
{ "duration": 10, "stop": { "signal": "ld.omega", "above": 1 } }
EOF
run "$DG" sim "$TMP/graph.json" --scenario "$TMP/stop.json" --csv "$TMP/stop.csv"
check "sim stop condition: exit 0" rc_is 0
check "sim stop condition: summary" has "$OUT" '^stopped: +stop condition'
check "sim stop condition: stopped early" \
  awk -F, 'END { if (!($1 > 0.05 && $1 < 0.2)) exit 1 }' "$TMP/stop.csv"

# Errors in the inputs name the file and the place.
run "$DG" sim "$TMP/missing.json" --scenario "$TMP/scn.json"
check "sim missing graph: exit 1" rc_is 1
check "sim missing graph: named" has "$ERR" "^$(re "$TMP")/missing\\.json: .*cannot read"

run "$DG" sim "$TMP/graph.json" --scenario "$TMP/nope.json"
check "sim missing scenario: exit 1" rc_is 1
check "sim missing scenario: named" has "$ERR" "^$(re "$TMP")/nope\\.json: .*cannot read"

echo '{ "duration": 1, "dt": 0 }' >"$TMP/baddt.json"
run "$DG" sim "$TMP/graph.json" --scenario "$TMP/baddt.json"
check "sim bad scenario: exit 1" rc_is 1
check "sim bad scenario: FILE: /dt: message" \
  has "$ERR" "^$(re "$TMP")/baddt\\.json: /dt: must be > 0 \\(got 0\\)$"

echo '{ "duration": 1, "inputs": { "throtle": [[0, 1]] } }' >"$TMP/badin.json"
run "$DG" sim "$TMP/graph.json" --scenario "$TMP/badin.json"
check "sim unknown input: exit 1" rc_is 1
check "sim unknown input: FILE: /inputs/throtle: did you mean" \
  has "$ERR" "^$(re "$TMP")/badin\\.json: /inputs/throtle: unknown input; did you mean \"throttle\"\\?$"

# Unwritable output: nothing is left behind.
run "$DG" sim "$TMP/graph.json" --scenario "$TMP/scn.json" --csv "$TMP/no/such/dir/out.csv"
check "sim unwritable CSV: exit 1" rc_is 1
check "sim unwritable CSV: message" has "$ERR" "cannot write $(re "$TMP")/no/such/dir/out\\.csv"
check "sim unwritable CSV: nothing written" no_file "$TMP/no"

mkdir "$TMP/adir"
run "$DG" sim "$TMP/graph.json" --scenario "$TMP/scn.json" --csv "$TMP/adir"
check "sim CSV onto a directory: exit 1" rc_is 1
check "sim CSV onto a directory: message" has "$ERR" "cannot write $(re "$TMP")/adir"
check "sim CSV onto a directory: no partial file" no_file "$TMP/adir.tmp"

# A run that fails mid-way (the speed overflows) leaves no partial CSV.
cat >"$TMP/diverge.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 1e-6, "torque": 1e300 },
              "ld":  { "type": "load", "inertia": 1e-6 } },
  "connections": [["src.out", "ld.in"]] }
EOF
run "$DG" sim "$TMP/diverge.json" --duration 100 --dt 1 --csv "$TMP/div.csv"
check "sim diverging: exit 1" rc_is 1
check "sim diverging: the step is named" has "$ERR" '^drivegraph sim: step [0-9]+ \(from t = [0-9.e+-]+ s\) failed'
check "sim diverging: the library's error follows" has "$ERR" "^$(re "$TMP")/diverge\\.json: /blocks/[a-z]+: "
check "sim diverging: no CSV" no_file "$TMP/div.csv"
check "sim diverging: no temporary file" no_file "$TMP/div.csv.tmp"

# blocks: the reference comes from the parameter tables; docs/blocks.md is
# exactly its Markdown form (regenerate with `make docs`).
run "$DG" blocks gear
check "blocks gear: exit 0" rc_is 0
check "blocks gear: the required ratio" has "$OUT" '^  ratio +number; required; > 0$'
check "blocks gear: efficiency default and range" has "$OUT" '^  efficiency +number; default 1; > 0, <= 1$'
check "blocks gear: a signal" has "$OUT" '^  omega_out +rad/s +output shaft speed$'
run "$DG" blocks gera
check "blocks unknown type: exit 1" rc_is 1
check "blocks unknown type: did you mean" has "$ERR" "unknown block type 'gera'; did you mean 'gear'\\?"
run "$DG" blocks gear load
check "blocks two types: exit 2" rc_is 2
run "$DG" blocks --markdown
check "blocks --markdown: exit 0" rc_is 0
"$DG" blocks --markdown > "$TMP/blocks.md"
check "docs/blocks.md is up to date (make docs)" cmp -s "$TMP/blocks.md" "$ROOT/docs/blocks.md"

finish
