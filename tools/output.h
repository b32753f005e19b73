/* Output of the drivegraph command: every file and stream a command writes
 * (CSV, plot, DOT, JSON, schema, imports, sweeps, summaries on stdout)
 * goes through this module, so that the same guarantees hold everywhere
 * (docs/output.md):
 *
 * - A regular file, or a path that does not exist yet, is written to a
 *   temporary file next to it (NAME.PID.tmp, or the target of a symbolic
 *   link) that is renamed over it only when everything was written,
 *   flushed, synced and closed without an error. A failure leaves the old
 *   file as it was, or no file.
 * - Anything else that exists (a device node such as /dev/null, a FIFO, a
 *   terminal) is written in place: opened, never created, truncated,
 *   replaced or renamed over. "-" (and /dev/stdout, /dev/fd/1,
 *   /proc/self/fd/1) is the process's stdout, /dev/stderr its stderr,
 *   written where they go, never reopened. A directory is refused.
 * - Every write, flush, sync and close is checked; the first failure is
 *   kept with its errno and reported as "drivegraph CMD: cannot write
 *   PATH: REASON" (REASON from strerror; "to stdout" for "-").
 * - Temporary files are removed on every way out: a failure, exit() (as
 *   PLplot's fatal errors take) and SIGINT, SIGTERM or SIGHUP (see
 *   out_catch_signals). SIGPIPE and SIGXFSZ are ignored so that a closed
 *   pipe or the file-size limit (ulimit -f) is a write error with its
 *   reason (EPIPE, EFBIG) like any other.
 *
 * Use: out_open, write to out_stream, then out_close (flush, sync, close:
 * reports a failure), then out_commit (the rename); out_discard instead
 * when the command fails. A command with several outputs closes them all
 * before it commits any, so that one that fails leaves the others
 * unwritten too. */
#ifndef DG_TOOL_OUTPUT_H
#define DG_TOOL_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct out_file out_file;

/* How an output reaches its path. */
typedef enum out_kind {
  OUT_REPLACE, /* a temporary file renamed over the path (regular or new) */
  OUT_IN_PLACE, /* opened and written in place (device, FIFO, ...) */
  OUT_STDOUT,  /* "-" (or /dev/stdout): standard output */
} out_kind;

/* Opens `path` ("-": stdout) for writing as described above. `cmd` names
 * the command in messages ("sim" for "drivegraph sim: ..."; kept, not
 * copied). NULL after printing why (the path and the system's reason). A
 * FIFO's open waits for its reader, as any writer's does. */
out_file *out_open(const char *cmd, const char *path);

/* The stream to write to (buffered; its writes are checked: a failed one
 * is kept and reported by out_close). */
FILE *out_stream(out_file *o);
out_kind out_kind_of(const out_file *o);
/* The path as given ("-" for stdout), for messages. */
const char *out_path(const out_file *o);
/* "PATH" or "stdout": how messages name the output. */
const char *out_name(const out_file *o);

/* The errno of the first failed write so far (0: none). A long run can
 * check it now and then to stop early instead of computing output that
 * cannot be written. */
int out_error(const out_file *o);

/* Writes `len` bytes (checked like the stream's writes). 0 or -1. */
int out_write(out_file *o, const void *data, size_t len);

/* Flushes, syncs (a file of its own) and closes the output. 0, or -1 after
 * the message "drivegraph CMD: cannot write PATH: REASON"; then the
 * temporary file is removed already (out_commit and out_discard still
 * free o). Standard output is flushed, not closed. */
int out_close(out_file *o);

/* Moves a closed output into place (the rename) and frees o. 0, or -1
 * after the message; the temporary file is removed then. o may be NULL
 * (0). */
int out_commit(out_file *o);

/* Gives an output up: its temporary file is removed, an in-place output
 * is left as far as it was written; frees o. o may be NULL. */
void out_discard(out_file *o);

/* The whole of `data` to `path` (open, write, close, commit): 0 or -1
 * after the message. */
int out_write_file(const char *cmd, const char *path, const void *data, size_t len);

/* Flushes the stdout stream (what printf wrote) and reports a failure
 * (-1, with the message "drivegraph CMD: cannot write to stdout: REASON")
 * unless one was reported already. 0 when all of it was written. */
int out_flush_stdout(const char *cmd);

/* ---------------------------------------------------------------------- */
/* Signals                                                                  */

/* Catches SIGINT, SIGTERM and SIGHUP for `cmd`. Until out_poll_signals(true),
 * a signal removes the temporary files of the open outputs, prints
 * "drivegraph CMD: stopped by SIGTERM; nothing was written" (naming the
 * outputs written in place, which may be cut) and ends the process by the
 * same signal. While polling, a signal only sets a flag that the caller
 * reads with out_signal_caught() and acts on (a second signal while the
 * flag is set acts at once as above). */
void out_catch_signals(const char *cmd);
void out_poll_signals(bool on);
/* The signal caught while polling, or 0. */
int out_signal_caught(void);
/* After a caught signal: every output discarded (out_discard), then the
 * process ended by that signal, as if it had not been caught. */
void out_die_by_signal(int sig)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
/* "SIGINT", "SIGTERM", "SIGHUP" or "signal N". */
const char *out_signal_name(int sig);

#endif
