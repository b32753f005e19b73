#!/usr/bin/env bash
# Tests of `drivegraph dot` (tools/cmd_dot.c) and `drivegraph schema`
# (tools/cmd_schema.c, tools/schema_gen.c). Run by meson as
#   test_cli_dot_schema.sh <path-to-drivegraph> <source-root>
# Needs Graphviz (`dot`) and python3 with jsonschema (`make deps`).
#
# The schema is checked both ways against the loader: every example graph
# passes both, and every bad graph below, and every mutation of the example
# graphs' parameters (wrong type, out of range, unknown choice, unknown key,
# missing required key), is rejected by both.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

# check NAME CONDITION...: one check; passes when CONDITION succeeds. On a
# failure the output of the last `run` is shown.

for tool in dot python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL - $tool is not installed (make deps)"
    echo "0 passed, 1 failed"
    exit 1
  fi
done
if ! python3 -c 'import jsonschema' 2>/dev/null; then
  echo "FAIL - python3 jsonschema is not installed (make deps: python3-jsonschema)"
  echo "0 passed, 1 failed"
  exit 1
fi

# ---------------------------------------------------------------------------
# Usage

run "$DG" dot --help
check "dot --help: exit 0" rc_is 0
check "dot --help: usage line" has "$OUT" '^usage: drivegraph dot GRAPH'
check "dot --help: shows the pipeline into Graphviz" has "$OUT" 'drivegraph dot .* \| dot -Tsvg'
run "$DG" dot
check "dot without a graph: exit 2" rc_is 2
check "dot without a graph: message" has "$ERR" '^drivegraph dot: no graph file given'
run "$DG" dot a.json b.json
check "dot with two graphs: exit 2" rc_is 2
run "$DG" dot --frob x.json
check "dot unknown option: exit 2" rc_is 2
check "dot unknown option: named" has "$ERR" "unknown option '--frob'"
run "$DG" schema --help
check "schema --help: exit 0" rc_is 0
check "schema --help: usage line" has "$OUT" '^usage: drivegraph schema'
run "$DG" schema extra
check "schema with an argument: exit 2" rc_is 2
check "schema with an argument: message" has "$ERR" "unexpected argument 'extra'"
run "$DG" --help
check "drivegraph --help lists dot" has "$OUT" '^  dot '
check "drivegraph --help lists schema" has "$OUT" '^  schema '

# ---------------------------------------------------------------------------
# dot: every example graph

# dot_has_graph DOT_FILE GRAPH_JSON: every block is a node (its id, quoted as
# DOT needs, at the start of a line) and every connection is an edge from the
# out port's cell to the in port's cell, whichever order the file lists it
# in (a shaft of more ports: an edge from each to its junction point); as
# many edges as that, besides the dotted signal bindings.
dot_has_graph() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
dot = open(sys.argv[1], encoding="utf-8").read()
g = json.load(open(sys.argv[2], encoding="utf-8"))
def q(s): return '"' + s.replace('"', '\\"') + '"'
missing = []
for bid in g["blocks"]:
    if "\n  %s [" % q(bid) not in dot:
        missing.append("node " + bid)
want = 0
for c in g["connections"]:
    if len(c) == 2:
        a, b = c
        (ab, ap), (bb, bp) = a.split(".", 1), b.split(".", 1)
        e1 = "%s:%s:e -> %s:%s:w" % (q(ab), q(ap), q(bb), q(bp))
        e2 = "%s:%s:e -> %s:%s:w" % (q(bb), q(bp), q(ab), q(ap))
        if e1 not in dot and e2 not in dot:
            missing.append("edge %s %s" % (a, b))
        want += 1
    else:  # a shaft of several ports: each port joined to its junction point
        for a in c:
            ab, ap = a.split(".", 1)
            if "%s:%s:" % (q(ab), q(ap)) not in dot:
                missing.append("port %s" % a)
        want += len(c)
# shafts only: the dotted arrows are signal bindings
edges = sum(1 for line in dot.splitlines() if " -> " in line and "style=dotted" not in line)
if edges != want:
    missing.append("%d edges for %d shaft ports and pairs" % (edges, want))
if missing:
    print("\n".join(missing))
    sys.exit(1)
EOF
}

# svg_texts SVG: every <text> and <title> of an SVG file, one per line
# (entities decoded), to check what a reader sees.
svg_texts() {
  python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
for el in ET.parse(sys.argv[1]).iter():
    if el.tag.endswith("}text") or el.tag.endswith("}title"):
        print("".join(el.itertext()).strip())
EOF
}

# svg_shows SVG TEXT: a <text> of the SVG is exactly TEXT (the texts are
# read once per SVG, into SVG.texts).
svg_shows() {
  [[ -f $1.texts ]] || svg_texts "$1" >"$1.texts"
  grep -Fxq -- "$2" "$1.texts"
}

shopt -s nullglob
graphs=("$ROOT"/graphs/*.json)
check "there are example graphs" test ${#graphs[@]} -ge 1
for f in "${graphs[@]}"; do
  name=$(basename "$f" .json)
  run "$DG" dot "$f"
  check "dot $name: exit 0" rc_is 0
  check "dot $name: nothing on stderr" is_empty "$ERR"
  check "dot $name: a digraph, power left to right" has "$OUT" 'rankdir=LR'
  printf '%s\n' "$OUT" >"$TMP/$name.dot"
  check "dot $name: every block a node, every connection an edge" \
    dot_has_graph "$TMP/$name.dot" "$f"
  run dot -Tsvg "$TMP/$name.dot" -o "$TMP/$name.svg"
  check "dot $name: Graphviz renders it (exit 0)" rc_is 0
  check "dot $name: Graphviz has no warning" is_empty "$ERR"
  for id in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["blocks"]))' "$f"); do
    check "dot $name: the picture shows block $id" svg_shows "$TMP/$name.svg" "$id"
  done
done

# Bindings: a signal bound to an input is a dotted arrow from its block,
# labelled signal → input; a channel the file binds by name is an ellipse.
run "$DG" dot "$ROOT/graphs/coupled_clutches.json"
check "dot bindings: a signal source" has_fixed "$OUT" \
  '"sin2" -> "clutch1" [style=dotted'
check "dot bindings: labelled signal → input" has_fixed "$OUT" 'label="value → engagement"'
check "dot bindings: a channel" has_fixed "$OUT" '"channel c2" -> "clutch2" [style=dotted'
run "$DG" dot "$ROOT/graphs/sedan_rwd_automatic.json"
check "dot bindings: the structural default (the gearbox's cut to its engine)" has_fixed "$OUT" \
  '"gearbox" -> "engine" [style=dotted'

# The flagship graph: labels carry the telling parameters, with units; the
# ground contacts are dashed, the shafts are not.
sedan="$ROOT/graphs/sedan_rwd_automatic.json"
if [[ -f $sedan ]]; then
  run "$DG" dot "$sedan"
  edge_line() { grep -F -- "$1" <<<"$OUT"; }
  # shows_param KEY VALUE: a node's parameter row is KEY, then VALUE.
  shows_param() {
    has "$OUT" "$(re "$1")(&#160;)*</FONT></TD><TD[^>]*><FONT[^>]*>$(re "$2")</FONT>"
  }
  check "dot sedan: the title is the graph's name" \
    has "$OUT" 'label=<<B>Sedan RWD, torque converter, 6-speed automatic</B>'
  check "dot sedan: the final drive's ratio" shows_param ratio '4.1'
  check "dot sedan: the differential's kind (an enum)" shows_param kind open
  check "dot sedan: the gearbox's shift mode (a nested enum)" shows_param shift.mode auto_rpm
  check "dot sedan: the gearbox's ratios, cut short with their count" \
    shows_param ratios '3.4 2.05 1.4 … 0.68 (6)'
  check "dot sedan: the engine's map summarised with its unit" \
    shows_param torque_map '5×3 table, −35…330 N·m'
  check "dot sedan: the body's mass with its unit" shows_param mass '1500 kg'
  check "dot sedan: no unit where the key names it" shows_param idle_rpm '800'
  check "dot sedan: a ground contact is dashed" \
    has "$(edge_line '"wheel_rl":"ground":e -> "body":"rear_left":w')" 'style=dashed'
  check "dot sedan: a shaft is not dashed" \
    lacks "$(edge_line '"engine":"out":e -> "converter":"in":w')" 'style=dashed'
  check "dot sedan: port cells name the ports" has "$OUT" '<TD PORT="rear_left"[^>]*>.*rear_left<'
  check "dot sedan: the front wheels' open hubs are left out" \
    lacks "$(grep -F '  "wheel_fl" [' <<<"$OUT")" 'PORT="hub"'
  check "dot sedan: an edge's tooltip names its ports" \
    has_fixed "$OUT" 'tooltip="diff.left → wheel_rl.hub"'
fi

# docs/sedan.svg is the picture of the sedan in README.md and docs/cli.md
# (regenerate it with the command in either: README.md, "Drawing a graph",
# or docs/cli.md, "dot"); it must show every block the graph has. (Not
# compared byte for byte: the SVG depends on the Graphviz version.)
if [[ -f $sedan ]]; then
  cp "$ROOT/docs/sedan.svg" "$TMP/docs_sedan.svg" 2>/dev/null || true
  run test -f "$TMP/docs_sedan.svg"
  check "docs/sedan.svg exists" rc_is 0
  for id in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["blocks"]))' "$sedan"); do
    check "docs/sedan.svg shows block $id" svg_shows "$TMP/docs_sedan.svg" "$id"
  done
fi

# ---------------------------------------------------------------------------
# dot: text that needs escaping. Ids are identifiers (letters of any
# script, digits, '_', '-'), so quotes, backslashes and markup can only
# come in the graph's name; ids in other scripts must still be shown.

cat >"$TMP/weird.json" <<'EOF'
{ "drivegraph": 1, "name": "Quotes \"and\" <tags> & back\\slash\\ Ünïcødé",
  "blocks": { "motör": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "gëar_π": { "type": "gear", "ratio": 2 },
              "変速機-2": { "type": "gear", "ratio": 1.5 },
              "x_y": { "type": "load", "inertia": 1.0 } },
  "connections": [["motör.out", "gëar_π.in"], ["gëar_π.out", "変速機-2.in"],
                  ["x_y.in", "変速機-2.out"]] }
EOF
run "$DG" validate "$TMP/weird.json"
check "escaping: the ids in other scripts are a valid graph" rc_is 0
run "$DG" dot "$TMP/weird.json"
check "escaping: dot exit 0" rc_is 0
printf '%s\n' "$OUT" >"$TMP/weird.dot"
run dot -Tsvg "$TMP/weird.dot" -o "$TMP/weird.svg"
check "escaping: Graphviz parses it (exit 0)" rc_is 0
check "escaping: an accented id is shown" svg_shows "$TMP/weird.svg" 'motör'
check "escaping: a Greek letter in an id is shown" svg_shows "$TMP/weird.svg" 'gëar_π'
check "escaping: a CJK id is shown" svg_shows "$TMP/weird.svg" '変速機-2'
check "escaping: the title is shown as text" \
  svg_shows "$TMP/weird.svg" 'Quotes "and" <tags> & back\slash\ Ünïcødé'
check "escaping: 3 edges in the picture" \
  test "$(grep -c 'class="edge"' "$TMP/weird.svg")" -eq 3
run dot -Tplain "$TMP/weird.dot"
check "escaping: Graphviz sees 4 nodes" test "$(grep -c '^node ' <<<"$OUT")" -eq 4

# Ids that are not identifiers are refused, each named with its character.
cat >"$TMP/odd_ids.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "mo\"tor": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "<b>&amp;:x y": { "type": "load", "inertia": 1.0 } },
  "connections": [["mo\"tor.out", "<b>&amp;:x y.in"]] }
EOF
run "$DG" validate "$TMP/odd_ids.json"
check "odd ids: exit 1" rc_is 1
check "odd ids: a quote is named" has_fixed "$OUT" \
  "/blocks/mo\"tor: block id has '\"' at character 3: an id is letters of any script"
check "odd ids: markup is named" has_fixed "$OUT" \
  "/blocks/<b>&amp;:x y: block id has '<' at character 1"

# ---------------------------------------------------------------------------
# dot: bad input

f="$ROOT/tests/data/invalid/param_out_of_range.json"
run "$DG" dot "$f"
check "dot invalid graph: exit 1" rc_is 1
check "dot invalid graph: nothing on stdout" is_empty "$OUT"
check "dot invalid graph: the problem as validate prints it" \
  grep -Fxq -- "$f: /blocks/g/ratio: must be > 0 (got -1)" "$TMP/stderr"
check "dot invalid graph: every problem" \
  grep -Fxq -- "$f: /blocks/g/efficiency: must be <= 1 (got 1.2)" "$TMP/stderr"

f="$ROOT/tests/data/invalid/zero_inertia.json"
if [[ -f $f ]]; then
  run "$DG" dot "$f"
  check "dot graph failing the mode checks: exit 1" rc_is 1
  check "dot graph failing the mode checks: the problem" has "$ERR" 'has no inertia'
fi

printf '{\n  "drivegraph": 1,\n  "blocks": {,\n' >"$TMP/syntax.json"
run "$DG" dot "$TMP/syntax.json"
check "dot syntax error: exit 1" rc_is 1
check "dot syntax error: FILE:line:column" has "$ERR" "^$(re "$TMP")/syntax\\.json:3:[0-9]+: "

run "$DG" dot "$TMP/missing.json"
check "dot missing file: exit 1" rc_is 1
check "dot missing file: named" has "$ERR" "^$(re "$TMP")/missing\\.json: .*cannot read"

# --output: written whole through a temporary file, or not at all.
gt="$ROOT/graphs/gear_train.json"
if [[ -f $gt ]]; then
  run "$DG" dot "$gt" --output "$TMP/gt.dot"
  check "dot --output: exit 0" rc_is 0
  check "dot --output: nothing on stdout" is_empty "$OUT"
  check "dot --output: same as stdout" cmp -s "$TMP/gt.dot" <("$DG" dot "$gt")
  check "dot --output: no temporary file left" no_file "$TMP/gt.dot.tmp"
  run "$DG" dot "$gt" -o "$TMP/no/such/dir/gt.dot"
  check "dot --output unwritable: exit 1" rc_is 1
  check "dot --output unwritable: message" has "$ERR" "cannot write $(re "$TMP")/no/such/dir/gt\\.dot"
fi
run "$DG" dot "$ROOT/tests/data/invalid/param_out_of_range.json" -o "$TMP/bad.dot"
check "dot --output of an invalid graph: no file" no_file "$TMP/bad.dot"

# ---------------------------------------------------------------------------
# schema

run "$DG" schema
check "schema: exit 0" rc_is 0
check "schema: nothing on stderr" is_empty "$ERR"
printf '%s\n' "$OUT" >"$TMP/schema.json"
check "schema: indented" has "$OUT" '^  "properties": \{'
check "schema: draft-07" has "$OUT" '"\$schema": "http://json-schema\.org/draft-07/schema#"'
check "schema: units in the descriptions" \
  has "$OUT" '"description": "crankshaft and flywheel inertia \(kg\*m\^2\)"'

run "$DG" schema --output "$TMP/schema-o.json"
check "schema --output: exit 0" rc_is 0
check "schema --output: same as stdout" cmp -s "$TMP/schema-o.json" "$TMP/schema.json"
check "schema --output: no temporary file left" no_file "$TMP/schema-o.json.tmp"
run "$DG" schema -o "$TMP/no/such/dir/s.json"
check "schema --output unwritable: exit 1" rc_is 1

# schema_check SCHEMA FILE...: prints "FILE: ok" or "FILE: invalid: why"
# for each file, by the standard validator for the schema's draft.
cat >"$TMP/schema_check.py" <<'EOF'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1], encoding="utf-8"))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
v = cls(schema)
for path in sys.argv[2:]:
    try:
        doc = json.load(open(path, encoding="utf-8"))
    except ValueError as e:
        print("%s: invalid: not JSON: %s" % (path, e))
        continue
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    if errs:
        e = errs[0]
        print("%s: invalid: /%s: %s" % (path, "/".join(map(str, e.path)), e.message))
    else:
        print("%s: ok" % path)
EOF

run python3 -c '
import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
assert jsonschema.validators.validator_for(s) is jsonschema.Draft7Validator
jsonschema.Draft7Validator.check_schema(s)
types = s["definitions"]["block"]["properties"]["type"]["enum"]
print(len(types), "types")
' "$TMP/schema.json"
check "schema: valid JSON and a valid draft-07 schema" rc_is 0
run "$DG" blocks
ntypes=$(grep -Ec '^[a-z_]+: ' <<<"$OUT")
run python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["definitions"]["block"]["properties"]["type"]["enum"]))' "$TMP/schema.json"
check "schema: one block definition per type of 'drivegraph blocks' ($ntypes)" test "$OUT" = "$ntypes"

run python3 "$TMP/schema_check.py" "$TMP/schema.json" "${graphs[@]}"
check "schema: the checker ran" rc_is 0
for f in "${graphs[@]}"; do
  check "schema accepts $(basename "$f")" grep -Fxq -- "$f: ok" "$TMP/stdout"
done

# A "$schema" key is allowed by the schema, for editors that follow it.
python3 - "$sedan" "$TMP/with_schema.json" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
out = {"$schema": "./drivegraph.schema.json"}
out.update(g)
json.dump(out, open(sys.argv[2], "w"), indent=2)
EOF
run python3 "$TMP/schema_check.py" "$TMP/schema.json" "$TMP/with_schema.json"
check "schema accepts a graph with a \"\$schema\" key" grep -Fxq -- "$TMP/with_schema.json: ok" "$TMP/stdout"
run "$DG" validate "$TMP/with_schema.json"
check "validate accepts it too" rc_is 0

# Bad graphs: the schema rejects each, and so does the loader. Each case is
# a block (or a top-level change) made from a small valid graph.
base='{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "g":   BLOCK,
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "g.in"], ["g.out", "ld.in"]] }'
bad_cases=(
  'unknown_param|{ "type": "gear", "ratio": 3, "ratoi": 3 }'
  'wrong_type|{ "type": "gear", "ratio": "3" }'
  'bool_for_number|{ "type": "gear", "ratio": true }'
  'out_of_range|{ "type": "gear", "ratio": 3, "efficiency": 1.5 }'
  'exclusive_min|{ "type": "gear", "ratio": 0 }'
  'missing_required|{ "type": "gear", "efficiency": 0.9 }'
  'missing_type|{ "ratio": 3 }'
  'unknown_type|{ "type": "gera", "ratio": 3 }'
  'bad_enum|{ "type": "differential", "kind": "opn" }'
  'nested_bad_enum|{ "type": "gearbox", "ratios": [3, 2], "shift": { "mode": "automatic" } }'
  'nested_unknown|{ "type": "gearbox", "ratios": [3, 2], "shift": { "mode": "auto_rpm", "upshift": 5000 } }'
  'array_element|{ "type": "gearbox", "ratios": [3, -2] }'
  'array_not_numbers|{ "type": "gearbox", "ratios": ["3", 2] }'
  'integer_not_whole|{ "type": "gearbox", "ratios": [3, 2], "start_gear": 1.5 }'
  'block_not_object|5'
)
for entry in "${bad_cases[@]}"; do
  name=${entry%%|*}
  printf '%s\n' "${base/BLOCK/${entry#*|}}" >"$TMP/bad_$name.json"
done
# Cases that need a different graph.
cat >"$TMP/bad_table_axis.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1,
                       "torque_vs_rpm": { "rpm": [0, 3000], "torq": [100, 0] } },
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "ld.in"]] }
EOF
cat >"$TMP/bad_table_short.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1,
                       "torque_vs_rpm": { "rpm": [0], "torque": [100] } },
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "ld.in"]] }
EOF
cat >"$TMP/bad_table_row.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "e": { "type": "engine", "inertia": 0.2, "idle_rpm": 800, "redline_rpm": 6000,
                     "torque_map": { "rpm": [1000, 6000], "throttle": [0, 1],
                                     "torque": [[-10, -20], [100, "x"]] } },
              "ld": { "type": "load", "inertia": 1.0 } },
  "connections": [["e.out", "ld.in"]] }
EOF
cat >"$TMP/bad_version.json" <<'EOF'
{ "drivegraph": 2,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "ld.in"]] }
EOF
cat >"$TMP/bad_top_key.json" <<'EOF'
{ "drivegraph": 1, "nmae": "x",
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "ld.in"]] }
EOF
cat >"$TMP/bad_no_connections.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 } } }
EOF
cat >"$TMP/bad_endpoint.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "ld"]] }
EOF
cat >"$TMP/bad_pair.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "ld":  { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "ld.in", "ld.in"]] }
EOF
cat >"$TMP/bad_dotted_id.json" <<'EOF'
{ "drivegraph": 1,
  "blocks": { "src": { "type": "torque_source", "inertia": 0.1, "torque": 10 },
              "l.d": { "type": "load", "inertia": 1.0 } },
  "connections": [["src.out", "l.d.in"]] }
EOF
cat >"$TMP/bad_no_blocks.json" <<'EOF'
{ "drivegraph": 1, "blocks": {}, "connections": [] }
EOF
bad_files=("$TMP"/bad_*.json)

# The good base graph passes both, so each bad case fails for its own reason.
good_block='{ "type": "gear", "ratio": 3 }'
printf '%s\n' "${base/BLOCK/$good_block}" >"$TMP/good_base.json"
run "$DG" validate "$TMP/good_base.json"
check "the base of the bad cases is valid" rc_is 0
run python3 "$TMP/schema_check.py" "$TMP/schema.json" "$TMP/good_base.json"
check "the schema accepts the base of the bad cases" grep -Fxq -- "$TMP/good_base.json: ok" "$TMP/stdout"

run python3 "$TMP/schema_check.py" "$TMP/schema.json" "${bad_files[@]}"
schema_out=$OUT
for f in "${bad_files[@]}"; do
  name=$(basename "$f" .json)
  check "schema rejects $name" has "$schema_out" "^$(re "$f"): invalid: "
done
for f in "${bad_files[@]}"; do
  name=$(basename "$f" .json)
  run "$DG" validate "$f"
  check "validate rejects $name too" rc_is 1
done

# Each rejection names the right place (the JSON path of the first error).
check "schema: unknown parameter reported at its block" \
  has "$schema_out" "bad_unknown_param\\.json: invalid: /blocks/g: Additional properties are not allowed \\('ratoi'"
check "schema: bad enum reported with the value" \
  has "$schema_out" "bad_bad_enum\\.json: invalid: /blocks/g/kind: 'opn' is not one of"
check "schema: missing required parameter named" \
  has "$schema_out" "bad_missing_required\\.json: invalid: /blocks/g: 'ratio' is a required property"
check "schema: wrong type reported at the value" \
  has "$schema_out" "bad_wrong_type\\.json: invalid: /blocks/g/ratio: '3' is not of type 'number'"

# Mutations of every example graph, derived from the schema itself: for
# each parameter a block gives, a value of the wrong type, one past each
# bound, an unknown choice; for each block an unknown key and each required
# key removed. Both the schema and the loader must reject every one.
mkdir "$TMP/mut"
python3 - "$TMP/schema.json" "$TMP/mut" "${graphs[@]}" <<'EOF'
import copy, json, os, sys
schema = json.load(open(sys.argv[1]))
defs = schema["definitions"]
outdir = sys.argv[2]
count = 0
def write(g, label):
    global count
    count += 1
    with open(os.path.join(outdir, "%04d_%s.json" % (count, label)), "w") as f:
        json.dump(g, f)
def mutations(s):
    """Bad values for a parameter schema: (label, value)."""
    t = s.get("type")
    if t in ("number", "integer"):
        yield "string", "12"
        if "minimum" in s: yield "below_min", s["minimum"] - 1
        if "exclusiveMinimum" in s: yield "at_xmin", s["exclusiveMinimum"]
        if "maximum" in s: yield "above_max", s["maximum"] + 1
        if "exclusiveMaximum" in s: yield "at_xmax", s["exclusiveMaximum"]
        if t == "integer": yield "fraction", 1.5
    elif t == "string" and "enum" in s:
        yield "bad_choice", "no_such_choice"
        yield "number", 1
    elif t == "boolean":
        yield "number", 1
    elif t == "array":
        yield "scalar", 1.0
        yield "strings", ["a", "b"]
    elif t == "object":
        yield "array", [1, 2]
        yield "unknown_key", {"no_such_key": 1}
for path in sys.argv[3:]:
    g = json.load(open(path))
    base = os.path.basename(path)[:-5]
    for bid, block in g["blocks"].items():
        d = defs[block["type"]]
        props = d["properties"]
        m = copy.deepcopy(g); m["blocks"][bid]["no_such_param"] = 1
        write(m, "%s_%s_unknown" % (base, bid))
        for key in d.get("required", []):
            if key == "type":
                continue
            m = copy.deepcopy(g); del m["blocks"][bid][key]
            write(m, "%s_%s_no_%s" % (base, bid, key))
        for key, value in block.items():
            if key in ("type", "doc"):
                continue
            for label, bad in mutations(props[key]):
                m = copy.deepcopy(g); m["blocks"][bid][key] = bad
                write(m, "%s_%s_%s_%s" % (base, bid, key, label))
            # one level down: nested objects' own parameters
            if props[key].get("type") == "object" and isinstance(value, dict):
                for sub in value:
                    for label, bad in mutations(props[key]["properties"][sub]):
                        m = copy.deepcopy(g); m["blocks"][bid][key][sub] = bad
                        write(m, "%s_%s_%s.%s_%s" % (base, bid, key, sub, label))
EOF
mutants=("$TMP"/mut/*.json)
check "mutations: more than 100 generated (${#mutants[@]})" test ${#mutants[@]} -gt 100
run python3 "$TMP/schema_check.py" "$TMP/schema.json" "${mutants[@]}"
accepted=$(grep -E ': ok$' <<<"$OUT" || true)
check "mutations: the schema rejects all ${#mutants[@]}" is_empty "$accepted"
[[ -z $accepted ]] || sed 's/^/  accepted: /' <<<"$accepted" | head -n 20
run "$DG" validate "${mutants[@]}"
accepted=$(grep -E ': ok \(' <<<"$OUT" || true)
check "mutations: the loader rejects all ${#mutants[@]} too" is_empty "$accepted"
[[ -z $accepted ]] || sed 's/^/  accepted: /' <<<"$accepted" | head -n 20

# ---------------------------------------------------------------------------
# Plugins: the schema and the picture include a plugin's block types. Uses
# the retarder example when the build has made it.

plugin="$(dirname "$DG")/examples/retarder/libretarder.so"
truck="$ROOT/examples/retarder/truck_retarder.json"
if [[ -f $plugin && -f $truck ]]; then
  run "$DG" schema --plugin "$plugin" --output "$TMP/schema-plugin.json"
  check "schema --plugin: exit 0" rc_is 0
  run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["definitions"]["block"]["properties"]["type"]["enum"][-1])' "$TMP/schema-plugin.json"
  check "schema --plugin: the plugin's type is in it" test "$OUT" = retarder
  run python3 "$TMP/schema_check.py" "$TMP/schema-plugin.json" "$truck"
  check "schema --plugin: accepts the plugin's example graph" grep -Fxq -- "$truck: ok" "$TMP/stdout"
  run python3 "$TMP/schema_check.py" "$TMP/schema.json" "$truck"
  check "schema without the plugin: rejects it" has "$OUT" ': invalid: /blocks/retarder/type: '
  run "$DG" dot --plugin "$plugin" "$truck"
  check "dot --plugin: exit 0" rc_is 0
  check "dot --plugin: the plugin's block is drawn" has "$OUT" '^  "retarder" \['
else
  echo "skip - plugin checks: no $plugin (not counted)"
fi

finish
