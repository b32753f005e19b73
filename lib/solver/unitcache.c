/* The compiled units' cache on disk (compile.c's dg_sim_compile): a unit
 * compiled once is loaded again by later processes instead of compiled.
 *
 * A unit's key is a 128-bit hash of everything the compiler's output
 * depends on: the compiler's words and flags (DG_CC, the include
 * directories), the generated files' names and text (which hold the
 * graph's parameters, the modes' rows and the library's layout), and the
 * sources they include: every file of the source tree's blocks/ and
 * include/drivegraph/, lib/'s headers and lib/table.c. The unit is kept
 * as <dir>/<32 hex digits>.so.
 *
 * The directory is DG_COMPILE_CACHE when set ("off": no cache), else
 * $XDG_CACHE_HOME/drivegraph, else $HOME/.cache/drivegraph; it is made
 * with mode 0700. A cached file is used only when it is a regular file
 * owned by the user and writable by no one else, in a directory owned by
 * the user and writable by no one else; a file that fails to load is
 * removed and the unit compiled again. Entries are written to a
 * temporary name and renamed, so concurrent processes never see half a
 * file. Nothing here is an error: without a usable cache a unit is
 * compiled as before. The cache is not pruned (a unit is 50 to 500 kB);
 * remove the directory to empty it, and after changing the compiler (its
 * command is in the key, not its version). */
#include "solver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Two independent 64-bit hashes of one stream: FNV-1a and a
 * multiply-rotate hash with the golden ratio's constant. */
void dgp_hash_init(dgp_hash *h) {
  h->a = 0xcbf29ce484222325ull;
  h->b = 0x9e3779b97f4a7c15ull;
}

void dgp_hash_bytes(dgp_hash *h, const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t a = h->a, b = h->b;
  for (size_t i = 0; i < n; i++) {
    a = (a ^ p[i]) * 0x100000001b3ull;
    b = (b ^ p[i]) * 0x9e3779b97f4a7c15ull;
    b = (b << 29) | (b >> 35);
  }
  h->a = a;
  h->b = b;
}

/* A string with its terminating zero, so that "ab" + "c" and "a" + "bc"
 * differ. */
void dgp_hash_str(dgp_hash *h, const char *s) { dgp_hash_bytes(h, s, strlen(s) + 1); }

/* A file's name and contents (a file that cannot be read hashes as its
 * name and a marker, so the key still differs from any readable one). */
void dgp_hash_file(dgp_hash *h, const char *path, const char *name) {
  dgp_hash_str(h, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    dgp_hash_str(h, "\x01unreadable");
    return;
  }
  unsigned char buf[16384];
  size_t n;
  uint64_t len = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    dgp_hash_bytes(h, buf, n);
    len += n;
  }
  fclose(f);
  dgp_hash_bytes(h, &len, sizeof len);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of directory `dir` whose name ends in `suffix` (any
 * with NULL), in name order. */
void dgp_hash_dir(dgp_hash *h, const char *dir, const char *suffix) {
  dgp_hash_str(h, dir);
  DIR *d = opendir(dir);
  if (!d) {
    dgp_hash_str(h, "\x01no directory");
    return;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
    if (e->d_name[0] == '.' || len < sl || (suffix && strcmp(e->d_name + len - sl, suffix) != 0))
      continue;
    if (n == cap) {
      size_t nc = cap ? 2 * cap : 64;
      char **nn = realloc(names, nc * sizeof *names);
      if (!nn)
        break;
      names = nn;
      cap = nc;
    }
    names[n] = strdup(e->d_name);
    if (names[n])
      n++;
  }
  closedir(d);
  if (n > 0)
    qsort(names, n, sizeof *names, by_name);
  char path[4200];
  for (size_t i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%.2000s/%.2000s", dir, names[i]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
      dgp_hash_file(h, path, names[i]);
    free(names[i]);
  }
  free(names);
}

/* Owned by the user and writable by no one else. */
static bool private_to_user(const struct stat *st) {
  return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool dgp_unit_cache_dir(char *buf, size_t size) {
  const char *env = getenv("DG_COMPILE_CACHE");
  if (env && strcmp(env, "off") == 0)
    return false;
  int n;
  if (env && env[0])
    n = snprintf(buf, size, "%s", env);
  else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0] == '/')
    n = snprintf(buf, size, "%s/drivegraph", getenv("XDG_CACHE_HOME"));
  else if (getenv("HOME") && getenv("HOME")[0] == '/') {
    /* $HOME/.cache first, then its drivegraph directory */
    n = snprintf(buf, size, "%s/.cache", getenv("HOME"));
    if (n > 0 && (size_t)n < size && mkdir(buf, 0700) != 0 && errno != EEXIST)
      return false;
    n = snprintf(buf, size, "%s/.cache/drivegraph", getenv("HOME"));
  } else
    return false;
  if (n <= 0 || (size_t)n >= size - 64) /* room for the file names */
    return false;
  if (mkdir(buf, 0700) != 0 && errno != EEXIST)
    return false;
  struct stat st;
  return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) && private_to_user(&st);
}

void dgp_unit_cache_path(const char *dir, const dgp_hash *h, char *path, size_t size) {
  snprintf(path, size, "%s/%016llx%016llx.so", dir, (unsigned long long)h->a,
           (unsigned long long)h->b);
}

bool dgp_unit_cache_usable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && private_to_user(&st);
}

void dgp_unit_cache_store(const char *path, const char *built) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%.4000s.%ld.tmp", path, (long)getpid());
  int in = open(built, O_RDONLY);
  if (in < 0)
    return;
  int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
  bool ok = out >= 0;
  char buf[16384];
  ssize_t n;
  while (ok && (n = read(in, buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    ok = n > 0;
    for (ssize_t w = 0; ok && w < n;) {
      ssize_t k = write(out, buf + w, (size_t)(n - w));
      if (k < 0 && errno == EINTR)
        continue;
      ok = k > 0;
      w += k > 0 ? k : 0;
    }
  }
  close(in);
  if (out >= 0 && close(out) != 0)
    ok = false;
  if (!ok || rename(tmp, path) != 0)
    unlink(tmp);
}
