#!/usr/bin/env bash
# Tests of `drivegraph sim --plot-signals LIST` (tools/plot.c,
# plot_trace_new_list): panels of any signal or channel, the list's syntax
# and its messages, files and exit codes. Run by meson as
#   test_cli_plot.sh <path-to-drivegraph> <source-root>
# (tests/test_cli_sim.sh covers the default panels.)
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

G=$ROOT/graphs
SEDAN=$G/sedan_rwd_automatic.json

# Under LeakSanitizer: fontconfig (through cairo) and libltdl (PLplot's driver
# loader) keep process-lifetime caches that are never freed. Nothing of ours
# is suppressed.
printf 'leak:libfontconfig.so\nleak:libltdl.so\n' >"$TMP/lsan.supp"
export LSAN_OPTIONS="suppressions=$TMP/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

is_png() { [[ $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; }
is_svg() { head -c 4096 "$1" | grep -q '<svg'; }
size_over() { [[ -f $1 && $(wc -c <"$1") -gt $2 ]]; }
png_height() { python3 -c "import struct,sys; print(struct.unpack('>II', open(sys.argv[1],'rb').read()[16:24])[1])" "$1"; }
no_tmp_files() { [[ -z $(find "$1" -name '*.tmp' -print -quit) ]]; }

# plot LIST FILE: a short launch of the sedan with the panels of LIST.
plot() { run "$DG" sim "$SEDAN" --preset launch --duration 3 --plot-signals "$1" --plot "$2"; }

# ---------------------------------------------------------------------------
# Lists that work

plot 'engine.rpm+gearbox.rpm,body.speed,throttle+brake,gearbox.gear' "$TMP/list.png"
check "list: exit 0" rc_is 0
check "list: PNG written" is_png "$TMP/list.png"
check "list: PNG is not trivial (> 20 kB)" size_over "$TMP/list.png" 20000
check "list: plot path printed last" has "$(tail -n1 <<<"$OUT")" "^plot: +$TMP/list\\.png$"
check "list: no temporary files" no_tmp_files "$TMP"
# 4 panels: 90 + 70 + 4 x 230 px.
check "list: four panels" [ "$(png_height "$TMP/list.png")" = 1080 ]

plot 'throttle' "$TMP/channel.png"
check "a channel alone: exit 0" rc_is 0
check "a channel alone: PNG written" is_png "$TMP/channel.png"
check "a channel alone: one panel" [ "$(png_height "$TMP/channel.png")" = 390 ]

plot 'engine.rpm+throttle' "$TMP/mixed.svg"
check "a signal and a channel in one panel: exit 0" rc_is 0
check "a signal and a channel in one panel: SVG written" is_svg "$TMP/mixed.svg"

plot ' engine.rpm + gearbox.rpm , wheel_rl.slip_ratio+wheel_rl.slip ' "$TMP/blanks.png"
check "blanks around names: exit 0" rc_is 0
check "blanks around names: two panels" [ "$(png_height "$TMP/blanks.png")" = 620 ]

# 12 panels and 8 lines in a panel are allowed.
twelve=$(printf 'engine.rpm,%.0s' {1..11})throttle
plot "$twelve" "$TMP/twelve.png"
check "12 panels: exit 0" rc_is 0
check "12 panels: 90 + 70 + 12 x 230 px" [ "$(png_height "$TMP/twelve.png")" = 2920 ]
plot 'throttle+brake+clutch+gear+engine.rpm+gearbox.rpm+engine.torque+body.speed' "$TMP/eight.png"
check "8 lines in a panel: exit 0" rc_is 0

# ---------------------------------------------------------------------------
# Lists that do not: exit 1, a message, no file

plot 'engine.rmp' "$TMP/bad.png"
check "unknown signal: exit 1" rc_is 1
check "unknown signal: did you mean" \
  has_fixed "$ERR" 'unknown signal or channel "engine.rmp"; did you mean "engine.rpm"?'
check "unknown signal: no plot" no_file "$TMP/bad.png"
check "unknown signal: no temporary files" no_tmp_files "$TMP"

plot 'body.speed,throtle' "$TMP/bad.png"
check "unknown channel: exit 1" rc_is 1
check "unknown channel: did you mean" \
  has_fixed "$ERR" 'unknown signal or channel "throtle"; did you mean "throttle"?'
check "unknown channel: no plot" no_file "$TMP/bad.png"

plot 'body.speed,,engine.rpm' "$TMP/bad.png"
check "empty panel: exit 1" rc_is 1
check "empty panel: message" \
  has_fixed "$ERR" "panel 2 is empty (two ',' in a row, or one at an end)"
plot 'body.speed,' "$TMP/bad.png"
check "trailing comma: exit 1" rc_is 1
check "trailing comma: message" has_fixed "$ERR" "panel 2 is empty"
plot 'engine.rpm+' "$TMP/bad.png"
check "empty name: exit 1" rc_is 1
check "empty name: message" \
  has_fixed "$ERR" "panel 1 has an empty name (two '+' in a row, or one at an end)"
plot ' ' "$TMP/bad.png"
check "empty list: exit 1" rc_is 1
check "empty list: message" has_fixed "$ERR" "no panels: give signal or channel names"
check "empty list: no plot" no_file "$TMP/bad.png"

plot "$twelve,brake" "$TMP/bad.png"
check "13 panels: exit 1" rc_is 1
check "13 panels: names the limit" has_fixed "$ERR" "too many panels (13): at most 12"
plot 'throttle,throttle+brake+clutch+gear+engine.rpm+gearbox.rpm+engine.torque+body.speed+brake' \
  "$TMP/bad.png"
check "9 lines: exit 1" rc_is 1
check "9 lines: names the limit" \
  has_fixed "$ERR" "too many lines in panel 2 (9): at most 8 lines share a panel"
check "too many: no plot" no_file "$TMP/bad.png"

finish
