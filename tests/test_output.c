/* Tests for tools/output.c, the tool's one way of writing files and
 * stdout: a temporary file renamed into place for regular files and new
 * paths only, devices and FIFOs written in place and never replaced, every
 * write checked and reported with the file and the reason, temporary
 * files removed on a failure, at exit() and on SIGTERM. Device nodes need
 * root (mknod); those tests pass without checking anything otherwise. */
#define _GNU_SOURCE /* mknod's S_IFCHR, makedev */
#include "output.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/dg_test_output.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[512];
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  if (d)
    closedir(d);
  rmdir(dir);
}

static const char *at(const char *name) {
  static char p[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

/* The number of entries of the test directory (temporary files included). */
static int entries(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (d)
    closedir(d);
  return n;
}

static int temporaries(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    n += len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0;
  }
  if (d)
    closedir(d);
  return n;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

static char *get(const char *path) {
  static char buf[4096];
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* stderr into a file while fn runs; its text. */
static char captured[4096];
static void capture_begin(int *saved) {
  fflush(stderr);
  *saved = dup(STDERR_FILENO);
  int fd = open(at("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ck_assert_int_ge(fd, 0);
  dup2(fd, STDERR_FILENO);
  close(fd);
}
static const char *capture_end(int saved) {
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  snprintf(captured, sizeof captured, "%s", get(at("stderr.txt")));
  unlink(at("stderr.txt"));
  return captured;
}

/* A new path: written to a temporary file next to it, which becomes the
 * file only at the commit. */
START_TEST(test_new_path) {
  const char *p = at("out.csv");
  out_file *o = out_open("test", p);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(out_kind_of(o), OUT_REPLACE);
  fprintf(out_stream(o), "t,x\n0,1\n");
  ck_assert_int_eq(access(p, F_OK), -1);
  ck_assert_int_eq(temporaries(), 1);
  ck_assert_int_eq(out_close(o), 0);
  ck_assert_int_eq(access(p, F_OK), -1); /* not before the commit */
  ck_assert_int_eq(out_commit(o), 0);
  ck_assert_str_eq(get(p), "t,x\n0,1\n");
  ck_assert_int_eq(entries(), 1);
}
END_TEST

/* An existing file is left as it was until the commit, and when the output
 * is given up; it keeps its permissions when replaced. */
START_TEST(test_replace_keeps_old_until_commit) {
  const char *p = at("out.csv");
  put(p, "old\n");
  chmod(p, 0640);
  out_file *o = out_open("test", p);
  ck_assert_ptr_nonnull(o);
  fputs("new\n", out_stream(o));
  out_discard(o);
  ck_assert_str_eq(get(p), "old\n");
  ck_assert_int_eq(entries(), 1);
  o = out_open("test", p);
  fputs("new\n", out_stream(o));
  ck_assert_int_eq(out_close(o), 0);
  ck_assert_str_eq(get(p), "old\n");
  ck_assert_int_eq(out_commit(o), 0);
  ck_assert_str_eq(get(p), "new\n");
  struct stat st;
  ck_assert_int_eq(stat(p, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0640);
  ck_assert_int_eq(entries(), 1);
}
END_TEST

/* Through a symbolic link: the file it points to is replaced, the link
 * stays. */
START_TEST(test_symlink_kept) {
  put(at("real.csv"), "old\n");
  ck_assert_int_eq(symlink("real.csv", at("link.csv")), 0);
  ck_assert_int_eq(out_write_file("test", at("link.csv"), "new\n", 4), 0);
  struct stat st;
  ck_assert_int_eq(lstat(at("link.csv"), &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  ck_assert_str_eq(get(at("real.csv")), "new\n");
  ck_assert_int_eq(entries(), 2);
}
END_TEST

/* A directory and a missing directory: refused with the path and the
 * reason, nothing created. */
START_TEST(test_refused_paths) {
  int saved;
  capture_begin(&saved);
  out_file *o = out_open("test", dir);
  const char *msg = capture_end(saved);
  ck_assert_ptr_null(o);
  char want[256];
  snprintf(want, sizeof want, "drivegraph test: cannot write %s: Is a directory\n", dir);
  ck_assert_str_eq(msg, want);
  capture_begin(&saved);
  o = out_open("test", at("no/such/out.csv"));
  msg = capture_end(saved);
  ck_assert_ptr_null(o);
  snprintf(want, sizeof want, "drivegraph test: cannot write %s: No such file or directory\n",
           at("no/such/out.csv"));
  ck_assert_str_eq(msg, want);
  ck_assert_int_eq(entries(), 0);
}
END_TEST

/* Device nodes of /dev/null's and /dev/full's kinds: written in place,
 * still the same devices afterwards; the full one's failure is reported
 * with ENOSPC and the path. */
START_TEST(test_device_nodes_in_place) {
  if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
      mknod(at("full"), S_IFCHR | 0666, makedev(1, 7)) != 0)
    return; /* needs root */
  out_file *o = out_open("test", at("null"));
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(out_kind_of(o), OUT_IN_PLACE);
  fputs("data\n", out_stream(o));
  ck_assert_int_eq(out_close(o), 0);
  ck_assert_int_eq(out_commit(o), 0);

  o = out_open("test", at("full"));
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(out_kind_of(o), OUT_IN_PLACE);
  for (int i = 0; i < 100000; i++)
    fputs("0123456789\n", out_stream(o));
  ck_assert_int_eq(out_error(o), ENOSPC); /* known during the writing */
  int saved;
  capture_begin(&saved);
  ck_assert_int_eq(out_close(o), -1);
  const char *msg = capture_end(saved);
  out_discard(o);
  char want[256];
  snprintf(want, sizeof want, "drivegraph test: cannot write %s: No space left on device\n",
           at("full"));
  ck_assert_str_eq(msg, want);

  struct stat st;
  ck_assert_int_eq(stat(at("null"), &st), 0);
  ck_assert(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3);
  ck_assert_int_eq(stat(at("full"), &st), 0);
  ck_assert(S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 7);
  ck_assert_int_eq(entries(), 2);
}
END_TEST

/* A FIFO: written in place (its reader gets every byte), still a FIFO. */
START_TEST(test_fifo_in_place) {
  ck_assert_int_eq(mkfifo(at("pipe"), 0600), 0);
  pid_t reader = fork();
  ck_assert_int_ge(reader, 0);
  if (reader == 0) { /* counts the bytes and exits with count % 251 */
    FILE *f = fopen(at("pipe"), "r");
    long n = 0;
    while (f && fgetc(f) != EOF)
      n++;
    _exit(f ? (int)(n % 251) : 255);
  }
  out_file *o = out_open("test", at("pipe"));
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(out_kind_of(o), OUT_IN_PLACE);
  for (int i = 0; i < 10000; i++)
    fputs("0123456789\n", out_stream(o));
  ck_assert_int_eq(out_close(o), 0);
  ck_assert_int_eq(out_commit(o), 0);
  int status;
  ck_assert_int_eq(waitpid(reader, &status, 0), reader);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 110000 % 251);
  struct stat st;
  ck_assert_int_eq(lstat(at("pipe"), &st), 0);
  ck_assert(S_ISFIFO(st.st_mode));
  ck_assert_int_eq(entries(), 1);
}
END_TEST

/* "-": stdout, written in place and left open. */
START_TEST(test_dash_is_stdout) {
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  int fd = open(at("stdout.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, STDOUT_FILENO);
  close(fd);
  printf("before\n"); /* what was printed before comes first */
  out_file *o = out_open("test", "-");
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(out_kind_of(o), OUT_STDOUT);
  ck_assert_str_eq(out_name(o), "stdout");
  fputs("data\n", out_stream(o));
  ck_assert_int_eq(out_commit(o), 0);
  ck_assert_int_ne(fcntl(STDOUT_FILENO, F_GETFD), -1); /* still open */
  printf("after\n");
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  ck_assert_str_eq(get(at("stdout.txt")), "before\ndata\nafter\n");
  ck_assert_int_eq(access(at("-"), F_OK), -1);
}
END_TEST

/* A write that fails into a temporary file (the file-size limit): the
 * reason (EFBIG) with the path, the temporary file removed, the old file
 * as it was. */
START_TEST(test_write_failure_leaves_old_file) {
  const char *p = at("big.csv");
  put(p, "old\n");
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) { /* 8 kB at most per file, in this child only */
    int saved;
    capture_begin(&saved);
    out_file *o = out_open("test", p);
    struct rlimit lim = {8192, 8192};
    int rc = setrlimit(RLIMIT_FSIZE, &lim);
    for (int i = 0; o && rc == 0 && i < 10000; i++)
      fputs("0123456789\n", out_stream(o));
    int closed = o ? out_close(o) : 0;
    int err = o ? out_error(o) : 0;
    out_discard(o);
    const char *msg = capture_end(saved);
    char want[256];
    snprintf(want, sizeof want, "drivegraph test: cannot write %s: File too large\n", p);
    _exit(closed == -1 && err == EFBIG && strcmp(msg, want) == 0 ? 0 : 1);
  }
  int status;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  ck_assert_str_eq(get(p), "old\n");
  ck_assert_int_eq(entries(), 1);
}
END_TEST

/* exit() with an output still open (as PLplot's fatal errors take) removes
 * its temporary file. */
START_TEST(test_exit_removes_temporaries) {
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    out_file *o = out_open("test", at("out.png"));
    fputs("partial", out_stream(o));
    fflush(out_stream(o));
    exit(temporaries() == 1 ? 3 : 4);
  }
  int status;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 3);
  ck_assert_int_eq(entries(), 0);
}
END_TEST

/* SIGTERM outside a polled loop: temporary files removed, "stopped by
 * SIGTERM; nothing was written", and the process ends by SIGTERM. */
START_TEST(test_signal_removes_temporaries) {
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    int fd = open(at("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    out_catch_signals("test");
    out_file *o = out_open("test", at("out.csv"));
    fputs("partial", out_stream(o));
    fflush(out_stream(o));
    if (temporaries() != 1)
      _exit(4);
    raise(SIGTERM);
    _exit(5);
  }
  int status;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert(WIFSIGNALED(status));
  ck_assert_int_eq(WTERMSIG(status), SIGTERM);
  ck_assert_str_eq(get(at("stderr.txt")), "\ndrivegraph test: stopped by SIGTERM; nothing was written\n");
  unlink(at("stderr.txt"));
  ck_assert_int_eq(entries(), 0);
}
END_TEST

/* While polling, a signal is only noted; out_die_by_signal then removes the
 * temporary files and ends the process by it. */
START_TEST(test_signal_polled) {
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    out_catch_signals("test");
    out_file *o = out_open("test", at("out.csv"));
    fputs("partial", out_stream(o));
    out_poll_signals(true);
    raise(SIGTERM);
    if (out_signal_caught() != SIGTERM || temporaries() != 1)
      _exit(4);
    out_die_by_signal(out_signal_caught());
  }
  int status;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert(WIFSIGNALED(status));
  ck_assert_int_eq(WTERMSIG(status), SIGTERM);
  ck_assert_int_eq(entries(), 0);
}
END_TEST

static Suite *output_suite(void) {
  Suite *s = suite_create("output");
  TCase *tc = tcase_create("output");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_new_path);
  tcase_add_test(tc, test_replace_keeps_old_until_commit);
  tcase_add_test(tc, test_symlink_kept);
  tcase_add_test(tc, test_refused_paths);
  tcase_add_test(tc, test_device_nodes_in_place);
  tcase_add_test(tc, test_fifo_in_place);
  tcase_add_test(tc, test_dash_is_stdout);
  tcase_add_test(tc, test_write_failure_leaves_old_file);
  tcase_add_test(tc, test_exit_removes_temporaries);
  tcase_add_test(tc, test_signal_removes_temporaries);
  tcase_add_test(tc, test_signal_polled);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(output_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
