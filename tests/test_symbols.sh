#!/usr/bin/env bash
# The exported API is the declared API, and the core stands alone. Run by
# meson as
#   test_symbols.sh <path-to-drivegraph> <source-root> <libdrivegraph.so>
#                   <libdrivegraph_core.a> <libdrivegraph_clients.a>
# Checks, from the built files:
# - every function declared in the public headers (include/drivegraph/*.h)
#   is marked DG_API (include/drivegraph/export.h);
# - libdrivegraph.so exports exactly the DG_API functions (nm -D);
# - the drivegraph tool exports exactly the DG_API functions among its
#   dg_* symbols: plugins resolve the library from the tool, so every public
#   function must be there and nothing internal may leak;
# - every dg_* function the library defines is a DG_API one: internal
#   functions are named dgp_*;
# - the core library (lib/*.c, blocks/) needs no libyaml and calls no dg_*
#   function it does not define (not the importers, not lib/run/), while
#   the client library does use libyaml (so the check can see it).
# Differences are printed name by name.
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

USAGE="usage: $0 <path-to-drivegraph> <source-root> <libdrivegraph.so> <libdrivegraph_core.a> <libdrivegraph_clients.a>"
LIB=${3:?$USAGE}
CORE=${4:?$USAGE}
CLIENTS=${5:?$USAGE}
HEADERS=("$ROOT"/include/drivegraph/*.h)

command -v nm >/dev/null || { echo "nm (binutils) not found"; exit 1; }

# The name of each DG_API declaration: the last identifier before "(".
grep -h '^DG_API' "${HEADERS[@]}" | sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]//' | sort -u \
  >"$TMP/declared"
# Function declarations (a line starting with a type and naming dg_...()
# at file scope) that lack DG_API.
grep -nE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]dg_[A-Za-z0-9_]+ *\(' "${HEADERS[@]}" \
  | grep -vE '^[^:]+:[0-9]+:(DG_API|typedef|static|extern|struct|enum)\b' >"$TMP/unmarked" || true

# defined_dynamic FILE: the names of the defined dynamic symbols, sorted.
defined_dynamic() { nm -D --defined-only "$1" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u; }

# same_set WHAT EXPECTED ACTUAL: the two sorted lists are equal; prints
# the names in one and not the other.
same_set() {
  local what=$1 expected=$2 actual=$3 extra missing
  extra=$(comm -13 "$expected" "$actual")
  missing=$(comm -23 "$expected" "$actual")
  [[ -z $extra ]] || sed "s/^/  $what exports, not declared with DG_API: /" <<<"$extra"
  [[ -z $missing ]] || sed "s/^/  declared with DG_API, $what does not export: /" <<<"$missing"
  [[ -z $extra && -z $missing ]]
}

has_declarations() { [[ -s $TMP/declared ]]; }
check "the public headers declare DG_API functions ($(wc -l <"$TMP/declared"))" has_declarations

all_marked() {
  [[ ! -s $TMP/unmarked ]] || sed 's/^/  public function without DG_API: /' "$TMP/unmarked"
  [[ ! -s $TMP/unmarked ]]
}
check "every function declared in include/drivegraph/*.h is marked DG_API" all_marked

defined_dynamic "$LIB" >"$TMP/lib_exports"
check "libdrivegraph.so exports exactly the DG_API functions" \
  same_set libdrivegraph.so "$TMP/declared" "$TMP/lib_exports"

defined_dynamic "$DG" | grep -E '^(dg|drivegraph)_' >"$TMP/tool_exports" || true
check "drivegraph exports exactly the DG_API functions (for plugins)" \
  same_set drivegraph "$TMP/declared" "$TMP/tool_exports"

# undefined_in ARCHIVE: the symbols its objects use without defining them.
undefined_in() { nm -u "$1" | awk 'NF >= 2 { print $2 }' | sort -u; }
undefined_in "$CORE" >"$TMP/core_undefined"
nm --defined-only "$CORE" | awk 'NF >= 3 { print $3 }' | sort -u >"$TMP/core_defined"

no_yaml() {
  local used
  used=$(grep -E '^yaml_' "$1" || true)
  [[ -z $used ]] || sed 's/^/  uses: /' <<<"$used"
  [[ -z $used ]]
}
check "the core library does not use libyaml" no_yaml "$TMP/core_undefined"

core_self_contained() {
  local outside
  outside=$(grep -E '^dg_' "$TMP/core_undefined" | comm -23 - "$TMP/core_defined")
  [[ -z $outside ]] || sed 's/^/  the core calls, not defined in it: /' <<<"$outside"
  [[ -z $outside ]]
}
check "the core library calls no dg_* function outside itself" core_self_contained

uses_yaml() { undefined_in "$CLIENTS" | grep -qE '^yaml_'; }
check "the client library uses libyaml (control)" uses_yaml

# Private functions have a prefix of their own (dgp_), so a call site tells
# the API from internals: every dg_* function the core and client archives
# define is a DG_API one.
private_prefixed() {
  { nm --defined-only "$CORE"; nm --defined-only "$CLIENTS"; } | awk '$2 == "T" { print $3 }' \
    | grep -E '^dg_' | sort -u >"$TMP/lib_dg"
  comm -23 "$TMP/lib_dg" "$TMP/declared" >"$TMP/unprefixed"
  [[ ! -s $TMP/unprefixed ]] || { echo "  dg_ but not DG_API (name them dgp_):"; sed 's/^/    /' "$TMP/unprefixed"; return 1; }
}
check "every library function named dg_* is public (internal ones are dgp_*)" private_prefixed

finish
