#!/usr/bin/env bash
# Tests of the tool's output guarantees (tools/output.c, docs/output.md):
# device nodes, FIFOs and '-' written in place and never replaced; write
# failures (a full device, a full file system, the file-size limit, a full
# stdout) exit non-zero naming the file and the reason, with no partial
# file left; SIGTERM and SIGINT leave no temporary file and say when the run
# stopped; --max-steps; long runs announced; the progress line moves by wall
# time. Run by meson as
#   test_cli_output.sh <path-to-drivegraph> <source-root>
# Device nodes (mknod) and a small tmpfs (mount) need root: without it
# those checks are skipped (printed as "skip -").
set -euo pipefail
source "$(dirname "$0")/cli_lib.sh"

SMALL=$TMP/small # a 64 kB tmpfs, when it can be mounted
trap 'umount "$SMALL" 2>/dev/null || true; rm -rf "$TMP"' EXIT

# Under LeakSanitizer: fontconfig (through cairo) and libltdl (PLplot's driver
# loader) keep process-lifetime caches that are never freed.
printf 'leak:libfontconfig.so\nleak:libltdl.so\n' >"$TMP/lsan.supp"
export LSAN_OPTIONS="suppressions=$TMP/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

G=$ROOT/graphs
GT=$G/gear_train.json
SEDAN=$G/sedan_rwd_automatic.json

skip() { echo "skip - $1 ($2)"; }
no_tmp_files() { [[ -z $(find "$1" -name '*.tmp' -print -quit) ]]; }
# is_dev NODE MAJOR MINOR: NODE is still a character device MAJOR/MINOR.
is_dev() { [[ -c $1 && $(stat -c '%t/%T' "$1") == "$(printf '%x/%x' "$2" "$3")" ]]; }
# wait_for FILE REGEX SECONDS: until a line of FILE matches (or the time is up).
wait_for() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -Eq -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
# bg_run OUTDIR CMD...: starts CMD in the background with stdout and stderr
# in OUTDIR/out and OUTDIR/err; PID is its process id.
bg_run() {
  local dir=$1
  shift
  rm -f "$dir/out" "$dir/err" # a wait_for must not see the last run's lines
  : >"$dir/out"
  : >"$dir/err"
  "$@" >"$dir/out" 2>"$dir/err" &
  PID=$!
}
# bg_wait OUTDIR: waits for the background run; sets RC, OUT and ERR.
bg_wait() {
  set +e
  wait "$PID"
  RC=$?
  set -e
  cp "$1/out" "$TMP/stdout"
  cp "$1/err" "$TMP/stderr"
  OUT=$(cat "$1/out")
  ERR=$(cat "$1/err")
}

# ---------------------------------------------------------------------------
# Device nodes: written in place, never replaced

mkdir "$TMP/dev"
if mknod "$TMP/dev/full" c 1 7 2>/dev/null && mknod "$TMP/dev/null" c 1 3 2>/dev/null; then
  FULL=$TMP/dev/full
  NULL=$TMP/dev/null

  run "$DG" sim "$GT" --duration 1 --csv "$NULL"
  check "csv to a null-kind node: exit 0" rc_is 0
  check "csv to a null-kind node: still the device 1/3" is_dev "$NULL" 1 3
  check "csv to a null-kind node: the summary names it" has_fixed "$OUT" "csv:         $NULL (101 rows"

  run "$DG" sim "$GT" --duration 1 --csv "$FULL"
  check "csv to a full-kind node: exit 1" rc_is 1
  check "csv to a full-kind node: the file and the reason" has_fixed "$ERR" \
    "drivegraph sim: cannot write $FULL: No space left on device"
  check "csv to a full-kind node: the run stopped, written in place" has "$ERR" \
    "^drivegraph sim: run stopped at t = [0-9.e+-]+ s of 1 s; the CSV on $(re "$FULL") is cut there"
  check "csv to a full-kind node: still the device 1/7" is_dev "$FULL" 1 7
  check "csv to a full-kind node: no summary" is_empty "$OUT"

  run "$DG" sim "$SEDAN" --preset launch --plot "$TMP/dev/p.png" --csv "$FULL"
  check "csv to a full-kind node with a plot: exit 1" rc_is 1
  check "csv to a full-kind node with a plot: no plot" no_file "$TMP/dev/p.png"
  check "csv to a full-kind node with a plot: no temporary file" no_tmp_files "$TMP/dev"

  # the other writers
  run "$DG" dot "$GT" -o "$NULL"
  check "dot -o a null-kind node: exit 0" rc_is 0
  check "dot -o a null-kind node: still the device" is_dev "$NULL" 1 3
  run "$DG" dot "$GT" -o "$FULL"
  check "dot -o a full-kind node: exit 1" rc_is 1
  check "dot -o a full-kind node: message" has_fixed "$ERR" \
    "drivegraph dot: cannot write $FULL: No space left on device"
  check "dot -o a full-kind node: still the device" is_dev "$FULL" 1 7
  run "$DG" schema -o "$FULL"
  check "schema -o a full-kind node: exit 1" rc_is 1
  check "schema -o a full-kind node: message" has_fixed "$ERR" \
    "drivegraph schema: cannot write $FULL: No space left on device"
  run "$DG" import "$ROOT/tests/data/yaml/powertrain_sedan.yaml" -o "$FULL"
  check "import -o a full-kind node: exit 1" rc_is 1
  check "import -o a full-kind node: message" has_fixed "$ERR" \
    "drivegraph import: cannot write $FULL: No space left on device"
  check "import -o a full-kind node: still the device" is_dev "$FULL" 1 7
  run "$DG" import "$ROOT/tests/data/yaml/powertrain_sedan.yaml" -o "$NULL"
  check "import -o a null-kind node: exit 0" rc_is 0
  check "import -o a null-kind node: still the device" is_dev "$NULL" 1 3
  run "$DG" sweep "$GT" --set motor.inertia=0.05,0.06 --duration 0.2 -o "$FULL"
  check "sweep -o a full-kind node: exit 1" rc_is 1
  check "sweep -o a full-kind node: message" has_fixed "$ERR" \
    "drivegraph sweep: cannot write $FULL: No space left on device"
  check "sweep -o a full-kind node: the results are said to be lost" has_fixed "$ERR" \
    "drivegraph sweep: 2 of 2 variants ran, but their results are lost: what reached $FULL is cut"
  check "sweep -o a full-kind node: no 'ok' count" lacks "$ERR" '[0-9]+ ok, [0-9]+ failed'
  check "sweep -o a full-kind node: still the device" is_dev "$FULL" 1 7
  run "$DG" sweep "$GT" --set motor.inertia=0.05,0.06 --duration 0.2 -o "$NULL"
  check "sweep -o a null-kind node: exit 0" rc_is 0
  check "sweep -o a null-kind node: still the device" is_dev "$NULL" 1 3
  check "device nodes: no temporary file" no_tmp_files "$TMP/dev"
else
  skip "device nodes" "mknod needs root"
fi

# ---------------------------------------------------------------------------
# A FIFO is written in place

mkfifo "$TMP/fifo.csv"
run "$DG" sim "$GT" --duration 0.5 --csv "$TMP/ref.csv"
cat "$TMP/fifo.csv" >"$TMP/from_fifo.csv" &
reader=$!
run "$DG" sim "$GT" --duration 0.5 --csv "$TMP/fifo.csv"
wait "$reader"
check "csv to a FIFO: exit 0" rc_is 0
check "csv to a FIFO: still a FIFO" test -p "$TMP/fifo.csv"
check "csv to a FIFO: the reader got the whole CSV" same_file "$TMP/from_fifo.csv" "$TMP/ref.csv"
check "csv to a FIFO: no temporary file" no_tmp_files "$TMP"

# ---------------------------------------------------------------------------
# '-' is stdout

mkdir "$TMP/cwd"
run bash -c 'cd "$1" && shift && exec "$@"' - "$TMP/cwd" "$DG" sim "$GT" --duration 0.5 --csv - \
  --signals motor.omega
cp "$TMP/stdout" "$TMP/dash.csv"
check "--csv -: exit 0" rc_is 0
"$DG" sim "$GT" --duration 0.5 --csv "$TMP/dash_ref.csv" --signals motor.omega >/dev/null
check "--csv -: the CSV on stdout" same_file "$TMP/dash.csv" "$TMP/dash_ref.csv"
check "--csv -: header first" has "$(head -n1 "$TMP/dash.csv")" '^t,motor\.omega$'
check "--csv -: the header and 51 rows" line_count_is "$(cat "$TMP/dash.csv")" 52
check "--csv -: no file named '-'" no_file "$TMP/cwd/-"
check "--csv -: the summary goes to stderr" has_fixed "$ERR" "stopped:     duration 0.5 s reached"
# /dev/stdout (a link into /proc, here to the regular file run() sends
# stdout to) is stdout too: written where it goes, not replaced by a rename
run "$DG" sim "$GT" --duration 0.5 --csv /dev/stdout --signals motor.omega
check "--csv /dev/stdout: exit 0" rc_is 0
check "--csv /dev/stdout: the CSV on stdout" same_file "$TMP/stdout" "$TMP/dash_ref.csv"
check "--csv /dev/stdout: the summary goes to stderr" has_fixed "$ERR" "stopped:     duration 0.5 s reached"
run "$DG" sim "$GT" --duration 0.5 --csv - --json
check "--csv - --json: exit 2" rc_is 2
check "--csv - --json: message" has_fixed "$ERR" \
  "drivegraph sim: --csv - and --json would both write to stdout: give --csv a file"
run "$DG" sim "$GT" --duration 0.5 --csv /dev/stdout --json
check "--csv /dev/stdout --json: exit 2" rc_is 2
check "--csv /dev/stdout --json: message" has_fixed "$ERR" \
  "drivegraph sim: --csv /dev/stdout and --json would both write to stdout: give --csv a file"

# ---------------------------------------------------------------------------
# A full stdout

for json in "" --json; do
  set +e
  "$DG" sim "$GT" --duration 0.1 $json >/dev/full 2>"$TMP/stderr"
  RC=$?
  set -e
  ERR=$(cat "$TMP/stderr")
  check "summary${json:+ $json} to /dev/full: exit 1" rc_is 1
  check "summary${json:+ $json} to /dev/full: message" has_fixed "$ERR" \
    "drivegraph sim: cannot write to stdout: No space left on device"
done
# what a command prints without writing a file itself: help texts
for args in "help" "bench --help"; do
  set +e
  "$DG" $args >/dev/full 2>"$TMP/stderr"
  RC=$?
  set -e
  ERR=$(cat "$TMP/stderr")
  check "$args to /dev/full: exit 1" rc_is 1
  check "$args to /dev/full: message" has_fixed "$ERR" \
    "drivegraph ${args%% *}: cannot write to stdout: No space left on device"
done
set +e
"$DG" sweep "$GT" --set motor.inertia=0.05,0.06 --duration 0.2 >/dev/full 2>"$TMP/stderr"
RC=$?
set -e
ERR=$(cat "$TMP/stderr")
check "sweep to /dev/full: exit 1" rc_is 1
check "sweep to /dev/full: message" has_fixed "$ERR" \
  "drivegraph sweep: cannot write to stdout: No space left on device"
check "sweep to /dev/full: no '2 ok, 0 failed'" lacks "$ERR" '2 ok, 0 failed'
check "sweep to /dev/full: the results are said to be lost" has_fixed "$ERR" \
  "drivegraph sweep: 2 of 2 variants ran, but their results are lost: what reached stdout is cut"
for c in "validate $GT" "dot $GT" "schema" "blocks"; do
  set +e
  # shellcheck disable=SC2086
  "$DG" $c >/dev/full 2>"$TMP/stderr"
  RC=$?
  set -e
  ERR=$(cat "$TMP/stderr")
  check "${c%% *} to /dev/full: exit 1" rc_is 1
  check "${c%% *} to /dev/full: message" has_fixed "$ERR" \
    "drivegraph ${c%% *}: cannot write to stdout: No space left on device"
done

# ---------------------------------------------------------------------------
# Regular files: replaced whole, with their permissions; links kept

printf 'old\n' >"$TMP/perm.csv"
chmod 640 "$TMP/perm.csv"
run "$DG" sim "$GT" --duration 0.5 --csv "$TMP/perm.csv"
check "replaced file: exit 0" rc_is 0
check "replaced file: the new CSV" same_file "$TMP/perm.csv" "$TMP/ref.csv"
check "replaced file: its mode kept" test "$(stat -c %a "$TMP/perm.csv")" = 640
printf 'old\n' >"$TMP/real.csv"
ln -s real.csv "$TMP/link.csv"
run "$DG" sim "$GT" --duration 0.5 --csv "$TMP/link.csv"
check "through a link: exit 0" rc_is 0
check "through a link: the link kept" test -L "$TMP/link.csv"
check "through a link: the file it points to replaced" same_file "$TMP/real.csv" "$TMP/ref.csv"
check "regular files: no temporary file" no_tmp_files "$TMP"

# ---------------------------------------------------------------------------
# A full file system and the file-size limit: no partial file

mkdir "$SMALL"
if mount -t tmpfs -o size=64k tmpfs "$SMALL" 2>/dev/null; then
  printf 'old\n' >"$SMALL/p.png"
  run "$DG" sim "$SEDAN" --preset launch --plot "$SMALL/p.png"
  check "png to a full tmpfs: exit 1" rc_is 1
  check "png to a full tmpfs: the file and the reason" has_fixed "$ERR" \
    "drivegraph sim: cannot write $SMALL/p.png: No space left on device"
  check "png to a full tmpfs: the old file as it was" test "$(cat "$SMALL/p.png")" = old
  check "png to a full tmpfs: no temporary file" no_tmp_files "$SMALL"
  check "png to a full tmpfs: no summary" is_empty "$OUT"
  rm -f "$SMALL/p.png"
  run "$DG" sim "$SEDAN" --preset launch --plot "$SMALL/p.svg"
  check "svg to a full tmpfs: exit 1" rc_is 1
  check "svg to a full tmpfs: message" has_fixed "$ERR" \
    "drivegraph sim: cannot write $SMALL/p.svg: No space left on device"
  check "svg to a full tmpfs: no file" no_file "$SMALL/p.svg"
  run "$DG" sim "$GT" --duration 100 --csv "$SMALL/c.csv"
  check "csv to a full tmpfs: exit 1" rc_is 1
  check "csv to a full tmpfs: message" has_fixed "$ERR" \
    "drivegraph sim: cannot write $SMALL/c.csv: No space left on device"
  check "csv to a full tmpfs: stopped early, nothing written" has "$ERR" \
    '^drivegraph sim: run stopped at t = [0-9.e+-]+ s of 100 s; nothing was written$'
  check "csv to a full tmpfs: no file" no_file "$SMALL/c.csv"
  check "full tmpfs: no temporary file" no_tmp_files "$SMALL"
  check "full tmpfs: empty" test -z "$(ls -A "$SMALL")"
else
  skip "a full tmpfs" "mount needs root"
fi

mkdir "$TMP/fsize"
run bash -c 'ulimit -f 64 && exec "$@"' - "$DG" sim "$SEDAN" --preset launch \
  --plot "$TMP/fsize/p.png"
check "png past the file-size limit: exit 1" rc_is 1
check "png past the file-size limit: the file and the reason" has_fixed "$ERR" \
  "drivegraph sim: cannot write $TMP/fsize/p.png: File too large"
check "png past the file-size limit: no file" no_file "$TMP/fsize/p.png"
check "png past the file-size limit: no temporary file" no_tmp_files "$TMP/fsize"
run bash -c 'ulimit -f 64 && exec "$@"' - "$DG" sim "$SEDAN" --preset launch \
  --csv "$TMP/fsize/c.csv"
check "csv past the file-size limit: exit 1" rc_is 1
check "csv past the file-size limit: message" has_fixed "$ERR" \
  "drivegraph sim: cannot write $TMP/fsize/c.csv: File too large"
check "csv past the file-size limit: nothing left" test -z "$(ls -A "$TMP/fsize")"

# ---------------------------------------------------------------------------
# --max-steps

run "$DG" sim "$GT" --duration 10 --dt 1e-9
check "1e10 steps: refused, exit 2" rc_is 2
check "1e10 steps: the limit and the remedy" has_fixed "$ERR" \
  "drivegraph sim: 10000000000 steps (10 s at dt 1e-09 s) are more than --max-steps 100000000: give a larger --dt or a shorter --duration, or --max-steps 10000000000 to run them anyway"
run "$DG" sim "$GT" --duration 1 --max-steps 999
check "--max-steps 999: 1000 steps refused" rc_is 2
check "--max-steps 999: message" has_fixed "$ERR" \
  "drivegraph sim: 1000 steps (1 s at dt 0.001 s) are more than --max-steps 999: give a larger --dt or a shorter --duration, or --max-steps 1000 to run them anyway"
run "$DG" sim "$GT" --duration 1 --max-steps 1e3
check "--max-steps 1e3: 1000 steps run" rc_is 0
run "$DG" sim "$GT" --duration 1 --dt 1e-13
check "beyond any --max-steps: exit 2" rc_is 2
check "beyond any --max-steps: message" has_fixed "$ERR" \
  "drivegraph sim: 1e+13 steps (1 s at dt 1e-13 s) are more than any run may take (1e+12): give a larger --dt or a shorter --duration"
for bad in 0 1.5 x 2e12; do
  run "$DG" sim "$GT" --duration 1 --max-steps "$bad"
  check "--max-steps $bad: exit 2" rc_is 2
  check "--max-steps $bad: message" has_fixed "$ERR" \
    "drivegraph sim: --max-steps: expected a whole number of steps from 1 to 1e+12 (got '$bad')"
done
run "$DG" sweep "$GT" --set motor.inertia=0.05 --duration 10 --dt 1e-9
check "sweep 1e10 steps a variant: exit 2" rc_is 2
check "sweep 1e10 steps a variant: message" has_fixed "$ERR" \
  "drivegraph sweep: 10000000000 steps (10 s at dt 1e-09 s) are more than --max-steps 100000000"
run "$DG" sim --help
check "sim --help: documents --max-steps and its default" has_fixed "$OUT" "(default 1e8; at most 1e12)"

# ---------------------------------------------------------------------------
# Long runs: announced, stopped by SIGTERM or SIGINT with no file left

mkdir "$TMP/sig" "$TMP/sigout"
bg_run "$TMP/sigout" "$DG" sim "$GT" --duration 1000 --dt 1e-5 --csv "$TMP/sig/out.csv" \
  --plot "$TMP/sig/out.png"
wait_for "$TMP/sigout/err" 'note:' 60 || true
tmp_seen=$(find "$TMP/sig" -name 'out.csv.*.tmp' | wc -l)
kill -TERM "$PID" 2>/dev/null || true
bg_wait "$TMP/sigout"
check "long run: announced before it goes on, with the estimate" has "$ERR" \
  '^drivegraph sim: note: 100000000 steps \(1000 s at dt 1e-05 s\) at about [0-9.e+-]+ us a step: this run takes about [0-9.]+ (s|min|h|days) \(Ctrl-C stops it and writes no file\)$'
check "long run: the CSV was going to a temporary file" test "$tmp_seen" -eq 1
check "SIGTERM: ends by the signal (exit 143)" rc_is 143
check "SIGTERM: says when the run stopped and that nothing was written" has "$ERR" \
  '^drivegraph sim: stopped by SIGTERM at t = [0-9.e+-]+ s of 1000 s \(step [0-9]+ of 100000000\); nothing was written$'
check "SIGTERM: no temporary file, no output" test -z "$(ls -A "$TMP/sig")"
check "SIGTERM: no summary" is_empty "$OUT"

# SIGINT: a background job of a script starts with SIGINT ignored; Python
# restores the default before exec
if command -v python3 >/dev/null; then
  bg_run "$TMP/sigout" python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$DG" sim "$GT" --duration 1000 --dt 1e-5 --csv "$TMP/sig/out.csv"
  wait_for "$TMP/sigout/err" 'note:' 60 || true
  kill -INT "$PID" 2>/dev/null || true
  bg_wait "$TMP/sigout"
  check "SIGINT: ends by the signal (exit 130)" rc_is 130
  check "SIGINT: says when the run stopped" has "$ERR" \
    '^drivegraph sim: stopped by SIGINT at t = [0-9.e+-]+ s of 1000 s \(step [0-9]+ of 100000000\); nothing was written$'
  check "SIGINT: no temporary file, no output" test -z "$(ls -A "$TMP/sig")"
else
  skip "SIGINT" "no python3"
fi

# a sweep stopped while its threads run (once its output's temporary file
# exists: the sweep has started and catches signals; a loaded machine may
# take more than a second to get there)
bg_run "$TMP/sigout" "$DG" sweep "$GT" --set motor.inertia=0.05,0.06 --duration 900 --dt 1e-5 \
  -o "$TMP/sig/sweep.jsonl"
for ((i = 0; i < 600; i++)); do
  [[ -n $(find "$TMP/sig" -name 'sweep.jsonl.*.tmp' 2>/dev/null) ]] && break
  sleep 0.1
done
sleep 0.5
kill -TERM "$PID" 2>/dev/null || true
bg_wait "$TMP/sigout"
check "sweep SIGTERM: exit 143" rc_is 143
check "sweep SIGTERM: message" has "$ERR" '^drivegraph sweep: stopped by SIGTERM; nothing was written$'
check "sweep SIGTERM: no temporary file, no output" test -z "$(ls -A "$TMP/sig")"

# ---------------------------------------------------------------------------
# The progress line moves by wall time, not by output rows (here one row at
# the start and one at the end, 100 s of simulated time later): on a
# terminal (script(1)), stopped after 3 s of wall time

if command -v script >/dev/null && command -v timeout >/dev/null; then
  cat >"$TMP/one_row.json" <<'EOF'
{ "duration": 100, "dt": 1e-6, "output_interval": 100 }
EOF
  run timeout 3 script -qfec "\"$DG\" sim \"$GT\" --scenario \"$TMP/one_row.json\" >/dev/null" \
    "$TMP/tty.log"
  progress_lines=$(tr '\r' '\n' <"$TMP/tty.log" |
    grep -Ec '^  t = [0-9.e+-]+ s / 100 s  \([0-9]+%\), about [0-9.]+ (s|min|h|days) left' || true)
  check "progress on a terminal: moves by wall time (2 or more updates in 3 s)" \
    test "$progress_lines" -ge 2
  check "progress on a terminal: the long run announced (up to: it has a scenario)" \
    grep -Eq 'drivegraph sim: note: 100000000 steps \(100 s at dt 1e-06 s\) at about [0-9.e+-]+ us a step: this run takes up to about' "$TMP/tty.log"
else
  skip "progress line" "no script(1) or timeout(1)"
fi

finish
