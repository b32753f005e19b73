/* Output of the drivegraph command (output.h, docs/output.md): temporary
 * file and rename for regular files and new paths, in place for devices,
 * FIFOs and stdout, every write checked, temporary files removed on every
 * way out. */
#define _GNU_SOURCE /* fopencookie: every write of a stream seen with its errno */
#include "output.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

struct out_file {
  const char *cmd;
  char *path;   /* as given */
  char *target; /* OUT_REPLACE: what the temporary file is renamed to */
  char *tmp;    /* OUT_REPLACE: the temporary file; NULL once renamed or removed */
  out_kind kind;
  int fd;       /* -1 once closed */
  bool own_fd;  /* fd was opened here (not stdout's or stderr's) */
  FILE *f;      /* the checked stream over fd; NULL once closed */
  int err;      /* errno of the first failed write, flush, sync or close */
  bool closed, failed;
  int slot;     /* in `open_outputs` */
};

/* ---------------------------------------------------------------------- */
/* The outputs a signal or exit() must clean up after                      */

#define MAX_OUTPUTS 16
/* Read by the signal handler: set before a slot is used, cleared before
 * what it points to is freed. */
static out_file *volatile open_outputs[MAX_OUTPUTS];
static volatile sig_atomic_t committed; /* outputs moved into place */
static bool stdout_reported;              /* a stdout failure was reported */
static const char *volatile signal_cmd = "";

static void remove_temporaries(void) {
  for (int i = 0; i < MAX_OUTPUTS; i++) {
    out_file *o = open_outputs[i];
    if (o && o->tmp)
      unlink(o->tmp); /* async-signal-safe */
  }
}

static void at_exit(void) { remove_temporaries(); }

static void ignore_write_signals(void) {
  static bool done;
  if (done)
    return;
  done = true;
  /* a closed pipe and the file-size limit become write errors (EPIPE,
   * EFBIG) that are reported with the file, instead of killing the
   * process with temporary files left behind */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  atexit(at_exit);
}

static int register_output(out_file *o) {
  for (int i = 0; i < MAX_OUTPUTS; i++)
    if (!open_outputs[i]) {
      o->slot = i;
      open_outputs[i] = o;
      return 0;
    }
  return -1;
}

static void unregister_output(out_file *o) {
  if (o->slot >= 0 && open_outputs[o->slot] == o)
    open_outputs[o->slot] = NULL;
  o->slot = -1;
}

/* ---------------------------------------------------------------------- */
/* Messages                                                                 */

const char *out_path(const out_file *o) { return o->path; }
out_kind out_kind_of(const out_file *o) { return o->kind; }
const char *out_name(const out_file *o) { return o->kind == OUT_STDOUT ? "stdout" : o->path; }
int out_error(const out_file *o) { return o->err; }
FILE *out_stream(out_file *o) { return o->f; }

static void report(const char *cmd, const char *path, int why) {
  if (strcmp(path, "-") == 0) {
    fprintf(stderr, "drivegraph %s: cannot write to stdout: %s\n", cmd, strerror(why));
  } else {
    char shown[1024]; /* a path from the command line, escaped (docs/errors.md) */
    dg_text_escape(shown, sizeof shown, path);
    fprintf(stderr, "drivegraph %s: cannot write %s: %s\n", cmd, shown, strerror(why));
  }
}

static void fail(out_file *o, int why) {
  if (!o->err)
    o->err = why ? why : EIO;
  if (!o->failed) {
    o->failed = true;
    report(o->cmd, o->path, o->err);
    if (o->kind == OUT_STDOUT)
      stdout_reported = true;
  }
}

/* ---------------------------------------------------------------------- */
/* The checked stream                                                       */

/* fopencookie's write: the bytes written, or 0 on an error (never less
 * than 0: glibc's stream would count it as bytes to write again). */
static ssize_t stream_write(void *cookie, const char *buf, size_t size) {
  out_file *o = cookie;
  if (o->err) { /* one failure is enough: the output is lost */
    errno = o->err;
    return 0;
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(o->fd, buf + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      o->err = n < 0 ? errno : EIO;
      errno = o->err;
      return 0;
    }
    done += (size_t)n;
  }
  return (ssize_t)size;
}

/* The descriptor is closed by out_close, which checks it. */
static int stream_close(void *cookie) {
  (void)cookie;
  return 0;
}

int out_write(out_file *o, const void *data, size_t len) {
  if (len > 0 && fwrite(data, 1, len, o->f) != len) {
    if (!o->err)
      o->err = errno ? errno : EIO;
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Opening                                                                  */

static void free_output(out_file *o) {
  unregister_output(o);
  free(o->path);
  free(o->target);
  free(o->tmp);
  free(o);
}

/* The temporary file next to o->target, created exclusively:
 * TARGET.PID.tmp (TARGET.PID-N.tmp if that exists). The fd, or -1. */
static int create_temporary(out_file *o, const struct stat *old) {
  size_t n = strlen(o->target) + 48;
  o->tmp = malloc(n);
  if (!o->tmp) {
    errno = ENOMEM;
    return -1;
  }
  int fd = -1;
  for (int k = 0; k < 100 && fd < 0; k++) {
    if (k == 0)
      snprintf(o->tmp, n, "%s.%ld.tmp", o->target, (long)getpid());
    else
      snprintf(o->tmp, n, "%s.%ld-%d.tmp", o->target, (long)getpid(), k);
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    int e = errno;
    free(o->tmp);
    o->tmp = NULL;
    errno = e;
    return -1;
  }
  if (old) { /* a replaced file keeps its permissions (and owner, for root) */
    (void)fchmod(fd, old->st_mode & 07777);
    if (geteuid() == 0 && (old->st_uid != 0 || old->st_gid != 0))
      (void)!fchown(fd, old->st_uid, old->st_gid);
  }
  return fd;
}

/* 1 or 2 when `path` names the process's own stdout or stderr (as
 * "/dev/stdout" does: a link into /proc that would resolve to the file or
 * pipe behind it), else -1. */
static int std_stream_of(const char *path) {
  static const char *const names[][3] = {
      {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"},
      {"/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"},
  };
  if (strcmp(path, "-") == 0)
    return 1;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      if (strcmp(path, names[k][i]) == 0)
        return k + 1;
  return -1;
}

/* Sets o->kind, o->target and o->fd for o->path. 0, or an errno. */
static int open_target(out_file *o) {
  int std = std_stream_of(o->path);
  if (std > 0) { /* written where the descriptor goes, never reopened */
    o->kind = std == 1 ? OUT_STDOUT : OUT_IN_PLACE;
    o->fd = std == 1 ? STDOUT_FILENO : STDERR_FILENO;
    return 0;
  }
  o->own_fd = true;
  struct stat st, lst;
  bool exists = stat(o->path, &st) == 0;
  if (!exists && errno != ENOENT)
    return errno;
  bool is_link = lstat(o->path, &lst) == 0 && S_ISLNK(lst.st_mode);
  if (exists && S_ISDIR(st.st_mode))
    return EISDIR;
  if ((exists && !S_ISREG(st.st_mode)) || (!exists && is_link)) {
    /* a device, a FIFO, a socket; or a dangling link, whose target is
     * created as any writer would: in place, never replaced */
    o->kind = OUT_IN_PLACE;
    o->fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (exists ? 0 : O_CREAT | O_TRUNC),
                 0666);
    return o->fd < 0 ? errno : 0;
  }
  if (exists && access(o->path, W_OK) != 0)
    return errno; /* a file the user may not write is not replaced either */
  o->kind = OUT_REPLACE;
  /* through a link: the file it points to is replaced, the link kept */
  o->target = is_link ? realpath(o->path, NULL) : strdup(o->path);
  if (!o->target)
    return errno ? errno : ENOMEM;
  o->fd = create_temporary(o, exists ? &st : NULL);
  return o->fd < 0 ? errno : 0;
}

out_file *out_open(const char *cmd, const char *path) {
  ignore_write_signals();
  out_file *o = calloc(1, sizeof *o);
  if (!o || !(o->path = strdup(path))) {
    free(o);
    report(cmd, path, ENOMEM);
    return NULL;
  }
  o->cmd = cmd;
  o->fd = -1;
  o->slot = -1;
  if (register_output(o) != 0) {
    report(cmd, path, EMFILE);
    free_output(o);
    return NULL;
  }
  int why = open_target(o);
  if (why) {
    report(cmd, path, why);
    if (o->fd >= 0 && o->own_fd)
      close(o->fd);
    if (o->tmp)
      unlink(o->tmp);
    free_output(o);
    return NULL;
  }
  if (!o->own_fd) /* what was printed before comes first */
    fflush(o->fd == STDOUT_FILENO ? stdout : stderr);
  cookie_io_functions_t io = {.write = stream_write, .close = stream_close};
  o->f = fopencookie(o, "w", io);
  if (!o->f) {
    report(cmd, path, errno ? errno : ENOMEM);
    out_discard(o);
    return NULL;
  }
  setvbuf(o->f, NULL, _IOFBF, 1 << 16);
  return o;
}

/* ---------------------------------------------------------------------- */
/* Closing and committing                                                   */

int out_close(out_file *o) {
  if (o->closed)
    return o->failed ? -1 : 0;
  o->closed = true;
  errno = 0;
  if (fflush(o->f) != 0 && !o->err)
    o->err = errno ? errno : EIO;
  if (ferror(o->f) && !o->err)
    o->err = EIO;
  fclose(o->f); /* stream_close: the descriptor is ours */
  o->f = NULL;
  if (o->kind == OUT_REPLACE && !o->err && fsync(o->fd) != 0)
    o->err = errno;
  if (o->own_fd) {
    if (close(o->fd) != 0 && !o->err && errno != EINTR)
      o->err = errno;
    o->fd = -1;
  }
  if (o->err) {
    fail(o, o->err);
    char *tmp = o->tmp; /* out of the signal handler's sight before it goes */
    o->tmp = NULL;
    if (tmp)
      unlink(tmp);
    free(tmp);
    return -1;
  }
  return 0;
}

int out_commit(out_file *o) {
  if (!o)
    return 0;
  int rc = out_close(o);
  if (rc == 0 && o->kind == OUT_REPLACE) {
    if (rename(o->tmp, o->target) != 0) {
      int why = errno;
      unlink(o->tmp);
      fail(o, why);
      rc = -1;
    }
    /* renamed: nothing is left to remove */
    char *tmp = o->tmp;
    o->tmp = NULL;
    free(tmp);
  }
  if (rc == 0)
    committed++;
  free_output(o);
  return rc;
}

void out_discard(out_file *o) {
  if (!o)
    return;
  if (!o->closed) {
    o->closed = true;
    if (o->f) {
      /* what is buffered for a temporary file is dropped (stream_write
       * refuses once err is set); an output in place gets it */
      if (o->kind == OUT_REPLACE && !o->err)
        o->err = ECANCELED;
      fclose(o->f);
      o->f = NULL;
    }
    if (o->own_fd && o->fd >= 0)
      close(o->fd);
    o->fd = -1;
  }
  if (o->tmp)
    unlink(o->tmp);
  free_output(o);
}

int out_write_file(const char *cmd, const char *path, const void *data, size_t len) {
  out_file *o = out_open(cmd, path);
  if (!o)
    return -1;
  out_write(o, data, len);
  if (out_close(o) != 0) {
    out_discard(o);
    return -1;
  }
  return out_commit(o);
}

int out_flush_stdout(const char *cmd) {
  errno = 0;
  bool bad = fflush(stdout) != 0;
  int why = errno;
  bad = ferror(stdout) || bad;
  if (!bad)
    return 0;
  if (!stdout_reported)
    report(cmd, "-", why ? why : EIO);
  stdout_reported = true;
  return -1;
}

/* ---------------------------------------------------------------------- */
/* Signals                                                                  */

static volatile sig_atomic_t polling, caught;

const char *out_signal_name(int sig) {
  switch (sig) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  default: return "a signal";
  }
}

static size_t length(const char *s) {
  size_t n = 0;
  while (s[n])
    n++;
  return n;
}

static void say(const char *s) { (void)!write(STDERR_FILENO, s, length(s)); }

static void die_now(int sig)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
static void die_now(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  _exit(128 + sig);
}

/* Only async-signal-safe calls: unlink, write, sigaction, sigprocmask,
 * raise, _exit. */
static void on_signal(int sig) {
  if (polling && !caught) {
    caught = sig;
    return;
  }
  remove_temporaries();
  say("\ndrivegraph ");
  say(signal_cmd);
  say(": stopped by ");
  say(out_signal_name(sig));
  say(committed ? "; outputs not yet complete were removed" : "; nothing was written");
  for (int i = 0; i < MAX_OUTPUTS; i++) {
    out_file *o = open_outputs[i];
    if (o && o->kind != OUT_REPLACE) {
      say(" (");
      say(o->kind == OUT_STDOUT ? "stdout" : o->path);
      say(", written in place, is cut)");
    }
  }
  say("\n");
  die_now(sig);
}

void out_catch_signals(const char *cmd) {
  signal_cmd = cmd;
  ignore_write_signals();
  const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old, sa;
    /* a signal the process was started to ignore (nohup, a background
     * job) stays ignored */
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
      sigaddset(&sa.sa_mask, sigs[k]);
    sa.sa_flags = SA_RESTART;
    sigaction(sigs[i], &sa, NULL);
  }
}

void out_poll_signals(bool on) {
  polling = on;
  if (!on && caught)
    on_signal(caught);
}

int out_signal_caught(void) { return caught; }

void out_die_by_signal(int sig) {
  polling = 0;
  for (int i = 0; i < MAX_OUTPUTS; i++)
    if (open_outputs[i])
      out_discard(open_outputs[i]);
  fflush(stderr);
  die_now(sig);
}
