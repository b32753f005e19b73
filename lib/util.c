/* Small shared services of the library: an arena for data that lives as long
 * as a graph, error values and the collector that reports every problem,
 * JSON pointers, ranges as message text, "did you mean" suggestions, and
 * JSON loading with errors mapped to line and column. Nothing here keeps
 * global state. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utf8proc.h>

/* ------------------------------------------------------------------------ */
/* Codes and error values                                                   */

const char *dg_code_name(int code) {
  static const char *const names[] = {
#define DG_CODE_NAME_(name, text) #name,
      DG_CODE_MAP(DG_CODE_NAME_)
#undef DG_CODE_NAME_
  };
  if (code < 0 || code >= DG_CODE_COUNT)
    return "?";
  return names[code];
}

/* The one-line description of a code, used when an error carries no text. */
static const char *code_text(int code) {
  static const char *const texts[] = {
#define DG_CODE_TEXT_(name, text) text,
      DG_CODE_MAP(DG_CODE_TEXT_)
#undef DG_CODE_TEXT_
  };
  if (code < 0 || code >= DG_CODE_COUNT)
    return "unknown error";
  return texts[code];
}

int dg_error_format(const dg_error *err, char *buf, size_t size) {
  if (!err)
    return snprintf(buf, size, "%s", "");
  const char *text = err->text[0] ? err->text : code_text(err->code);
  const char *file = err->file;
  const char *sep = file[0] ? ":" : "";
  if (err->line > 0) {
    /* The compiler style: editors jump to `file:line:column`. */
    if (err->column > 0)
      return snprintf(buf, size, "%s%s%d:%d: %s", file, sep, err->line, err->column, text);
    return snprintf(buf, size, "%s%s%d: %s", file, sep, err->line, text);
  }
  return snprintf(buf, size, "%s%s%s%s%s", file, file[0] ? ": " : "", err->path,
                  err->path[0] ? ": " : "", text);
}

void dgp_error_clear(dg_error *err) {
  if (err)
    memset(err, 0, sizeof *err);
}

/* Every field of an error is escaped (dg_text_escape): its text echoes
 * ids, keys, strings and paths from files, and whoever prints it (a
 * terminal, a log) must not see control, format or bidi characters. The
 * text is formatted whole first, so an escape is never cut in two. */
static void error_vfill(dg_error *err, int code, const char *file, const char *path, int line,
                        int column, const char *prefix, const char *fmt, va_list ap) {
  memset(err, 0, sizeof *err);
  err->code = code;
  dg_text_escape(err->file, sizeof err->file, file ? file : "");
  dg_text_escape(err->path, sizeof err->path, path ? path : "");
  err->line = line > 0 ? line : 0;
  err->column = line > 0 && column > 0 ? column : 0;
  if (fmt) {
    char raw[4 * DG_ERROR_TEXT_LEN];
    size_t at = (size_t)snprintf(raw, sizeof raw, "%s", prefix ? prefix : "");
    if (at < sizeof raw)
      vsnprintf(raw + at, sizeof raw - at, fmt, ap);
    dg_text_escape(err->text, sizeof err->text, raw);
  }
}

/* Overwrites: public entry points clear `err` first and stop at the first
 * failure, so the first error is the one that is kept. */
void dgp_error_set(dg_error *err, int code, const char *file, const char *path, const char *fmt,
                  ...) {
  if (!err)
    return;
  va_list ap;
  va_start(ap, fmt);
  error_vfill(err, code, file, path, 0, 0, NULL, fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* Error collection                                                         */

void dgp_diag_init(dg_diag *d, const char *file, dg_diag_fn fn, void *user) {
  memset(d, 0, sizeof *d);
  d->file = file ? file : "";
  d->fn = fn;
  d->user = user;
}

void dgp_diag_vadd(dg_diag *d, int code, const char *path, int line, int column, const char *fmt,
                  va_list ap) {
  if (!d)
    return;
  dg_error e;
  error_vfill(&e, code, d->file, path, line, column, NULL, fmt, ap);
  if (d->count == 0)
    d->first = e;
  if (d->count < INT_MAX)
    d->count++;
  if (d->fn)
    d->fn(&e, d->user);
}

void dgp_diag_add(dg_diag *d, int code, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dgp_diag_vadd(d, code, path, 0, 0, fmt, ap);
  va_end(ap);
}

void dgp_diag_vwarn(dg_diag *d, const char *path, const char *fmt, va_list ap) {
  if (!d)
    return;
  dg_error e;
  error_vfill(&e, DG_OK, d->file, path, 0, 0, "warning: ", fmt, ap);
  if (d->warnings < INT_MAX)
    d->warnings++;
  if (d->graph)
    dgp_graph_keep_warning(d->graph, &e);
  if (d->fn)
    d->fn(&e, d->user);
}

void dgp_diag_warn(dg_diag *d, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dgp_diag_vwarn(d, path, fmt, ap);
  va_end(ap);
}

/* Like dgp_diag_add, with a position in the text (syntax errors). */
static void diag_at(dg_diag *d, int code, int line, int column, const char *fmt, ...)
    DG_PRINTF(5, 6);
static void diag_at(dg_diag *d, int code, int line, int column, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dgp_diag_vadd(d, code, "", line, column, fmt, ap);
  va_end(ap);
}

void dgp_diag_to_error(const dg_diag *d, dg_error *err) {
  if (d && err && d->count > 0)
    *err = d->first;
}

/* ------------------------------------------------------------------------ */
/* Untrusted text: escaping, identifiers, normalization, lookalikes         */

/* The code point at s (at most n bytes), its length in *len; -1 (and *len
 * 1) for a byte that does not start a valid UTF-8 sequence. */
static int32_t next_cp(const char *s, size_t n, size_t *len) {
  utf8proc_int32_t cp;
  utf8proc_ssize_t k =
      utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)(n < 4 ? n : 4), &cp);
  if (k <= 0) {
    *len = 1;
    return -1;
  }
  *len = (size_t)k;
  return cp;
}

/* Characters shown escaped: controls (C0, DEL, C1), format characters
 * (Cf: the bidi embeddings, overrides and isolates, zero-width joiners and
 * spaces, the BOM, soft hyphens, tags), line and paragraph separators, and
 * surrogates. */
static bool escaped_cp(int32_t cp) {
  switch (utf8proc_category(cp)) {
  case UTF8PROC_CATEGORY_CC:
  case UTF8PROC_CATEGORY_CF:
  case UTF8PROC_CATEGORY_ZL:
  case UTF8PROC_CATEGORY_ZP:
  case UTF8PROC_CATEGORY_CS:
    return true;
  default:
    return false;
  }
}

size_t dg_text_escape(char *out, size_t size, const char *text) {
  if (!out || size == 0)
    return 0;
  if (!text)
    text = "";
  size_t at = 0, n = strlen(text);
  for (size_t i = 0; i < n;) {
    size_t len;
    int32_t cp = next_cp(text + i, n - i, &len);
    char esc[16];
    const char *piece = text + i;
    size_t plen = len;
    if (cp < 0) {
      snprintf(esc, sizeof esc, "\\x%02X", (unsigned char)text[i]);
      piece = esc;
      plen = strlen(esc);
    } else if (escaped_cp(cp)) {
      snprintf(esc, sizeof esc, cp > 0xFFFF ? "\\U%08X" : "\\u%04X", (unsigned)cp);
      piece = esc;
      plen = strlen(esc);
    }
    if (at + plen >= size) /* never a piece cut in two */
      break;
    memcpy(out + at, piece, plen);
    at += plen;
    i += len;
  }
  out[at] = '\0';
  return at;
}

size_t dgp_utf8_invalid_at(const char *text, size_t len) {
  for (size_t i = 0; i < len;) {
    if ((unsigned char)text[i] < 0x80) {
      i++;
      continue;
    }
    utf8proc_int32_t cp;
    utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)text + i,
                                          (utf8proc_ssize_t)(len - i < 4 ? len - i : 4), &cp);
    if (k <= 0)
      return i;
    i += (size_t)k;
  }
  return len;
}

bool dgp_text_needs_escape(const char *text) {
  size_t n = text ? strlen(text) : 0;
  for (size_t i = 0; i < n;) {
    size_t len;
    int32_t cp = next_cp(text + i, n - i, &len);
    if (cp < 0 || escaped_cp(cp))
      return true;
    i += len;
  }
  return false;
}

char *dgp_text_nfc(const char *s) {
  if (!s)
    return NULL;
  return (char *)utf8proc_NFC((const utf8proc_uint8_t *)s);
}

/* Identifiers: letters of any script (Unicode L*), combining marks after
 * the first character (M*: accents, the vowel signs of Indic scripts),
 * decimal digits of any script (Nd), '_' and '-'. */
int dgp_ident_check(const char *s, char *why, size_t size) {
  size_t n = s ? strlen(s) : 0;
  if (n == 0) {
    snprintf(why, size, "is empty");
    return -1;
  }
  int index = 0;
  for (size_t i = 0; i < n; index++) {
    size_t len;
    int32_t cp = next_cp(s + i, n - i, &len);
    if (cp < 0) {
      snprintf(why, size, "is not valid UTF-8 (byte %zu)", i + 1);
      return -1;
    }
    utf8proc_category_t c = utf8proc_category(cp);
    bool letter = c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
    bool mark = c >= UTF8PROC_CATEGORY_MN && c <= UTF8PROC_CATEGORY_ME;
    bool ok = letter || c == UTF8PROC_CATEGORY_ND || cp == '_' || cp == '-' || (mark && index > 0);
    if (!ok) {
      char shown[16];
      if (cp >= 0x20 && cp < 0x7F && cp != '\'')
        snprintf(shown, sizeof shown, "'%c'", (char)cp);
      else
        snprintf(shown, sizeof shown, "U+%04X", (unsigned)cp);
      snprintf(why, size, "has %s at character %d", shown, index + 1);
      return -1;
    }
    i += len;
  }
  return 0;
}

/* Letters of other scripts that look like Latin ones (after case folding):
 * Cyrillic and Greek. A lookalike's skeleton maps them to the Latin. */
static const struct {
  int32_t from;
  char to;
} confusables[] = {
    {0x0430, 'a'}, {0x0432, 'b'}, {0x0435, 'e'}, {0x043A, 'k'}, {0x043C, 'm'}, {0x043D, 'h'},
    {0x043E, 'o'}, {0x0440, 'p'}, {0x0441, 'c'}, {0x0442, 't'}, {0x0443, 'y'}, {0x0445, 'x'},
    {0x0456, 'i'}, {0x0458, 'j'}, {0x0455, 's'}, {0x0501, 'd'}, {0x051B, 'q'}, {0x051D, 'w'},
    {0x04AF, 'y'}, {0x04BB, 'h'}, {0x03B1, 'a'}, {0x03B5, 'e'}, {0x03B9, 'i'}, {0x03BA, 'k'},
    {0x03BD, 'v'}, {0x03BF, 'o'}, {0x03C1, 'p'}, {0x03C4, 't'}, {0x03C5, 'u'}, {0x03C7, 'x'},
    {0x0131, 'i'},
};

/* The skeleton of s into cps (at most max code points): compatibility
 * forms, case and marks dropped (NFKC casefold, marks stripped), then
 * the confusables above mapped to Latin. Two names with one skeleton look
 * alike. The number of code points, or -1 (invalid UTF-8, too long). */
static int skeleton(const char *s, int32_t *cps, int max) {
  utf8proc_uint8_t *m = NULL;
  utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)s, 0, &m,
                                    UTF8PROC_NULLTERM | UTF8PROC_STABLE | UTF8PROC_COMPAT |
                                        UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD |
                                        UTF8PROC_STRIPMARK | UTF8PROC_IGNORE);
  if (r < 0)
    return -1;
  int n = 0;
  for (utf8proc_ssize_t i = 0; i < r;) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t k = utf8proc_iterate(m + i, r - i, &cp);
    if (k <= 0 || n == max) {
      free(m);
      return -1;
    }
    for (size_t c = 0; c < sizeof confusables / sizeof confusables[0]; c++)
      if (confusables[c].from == cp)
        cp = (unsigned char)confusables[c].to;
    cps[n++] = cp;
    i += k;
  }
  free(m);
  return n;
}

#define SKELETON_MAX 256

bool dgp_text_lookalike(const char *a, const char *b) {
  if (!a || !b || strcmp(a, b) == 0)
    return false;
  int32_t sa[SKELETON_MAX], sb[SKELETON_MAX];
  int na = skeleton(a, sa, SKELETON_MAX), nb = skeleton(b, sb, SKELETON_MAX);
  return na >= 0 && na == nb && memcmp(sa, sb, sizeof *sa * (size_t)na) == 0;
}

void dgp_text_difference(const char *yours, const char *theirs, char *buf, size_t size) {
  size_t ny = strlen(yours), nt = strlen(theirs), i = 0, j = 0;
  int index = 1;
  buf[0] = '\0';
  while (i < ny || j < nt) {
    size_t ly = 0, lt = 0;
    int32_t cy = i < ny ? next_cp(yours + i, ny - i, &ly) : -2;
    int32_t ct = j < nt ? next_cp(theirs + j, nt - j, &lt) : -2;
    if (cy != ct) {
      char a[24] = "nothing", b[24] = "nothing";
      if (cy >= 0)
        snprintf(a, sizeof a, "U+%04X", (unsigned)cy);
      if (ct >= 0)
        snprintf(b, sizeof b, "U+%04X", (unsigned)ct);
      snprintf(buf, size, "differs at character %d: %s where the id has %s", index, a, b);
      return;
    }
    i += ly;
    j += lt;
    index++;
  }
}

/* ------------------------------------------------------------------------ */
/* Arena                                                                    */

/* Chunks are calloc'ed and never reused, so every allocation is zeroed
 * without a memset. Alignment is computed on addresses, so it holds even
 * where malloc only guarantees 8 bytes. */
#define ARENA_ALIGN ((size_t)16)
#define ARENA_CHUNK ((size_t)16384)

typedef struct arena_chunk {
  struct arena_chunk *next;
  unsigned char *cur; /* next free byte */
  unsigned char *end;
} arena_chunk;

struct dg_arena {
  arena_chunk *head; /* the chunk being filled; large blocks are linked behind it */
};

static arena_chunk *chunk_new(size_t capacity) {
  if (capacity > SIZE_MAX - sizeof(arena_chunk) - ARENA_ALIGN)
    return NULL;
  arena_chunk *c = calloc(1, sizeof(arena_chunk) + ARENA_ALIGN + capacity);
  if (!c)
    return NULL;
  c->cur = (unsigned char *)(c + 1);
  c->end = c->cur + ARENA_ALIGN + capacity;
  return c;
}

/* Address of the first aligned byte at or after p. */
static unsigned char *align_up(unsigned char *p) {
  uintptr_t mis = (uintptr_t)p % ARENA_ALIGN;
  return mis ? p + (ARENA_ALIGN - mis) : p;
}

dg_arena *dgp_arena_new(void) { return calloc(1, sizeof(dg_arena)); }

void *dgp_arena_alloc(dg_arena *a, size_t size) {
  DG_ASSERT(a);
  if (!a)
    return NULL;
  if (size == 0)
    size = 1; /* distinct pointers for distinct calls */
  arena_chunk *c = a->head;
  if (c) {
    unsigned char *p = align_up(c->cur);
    if (p <= c->end && size <= (size_t)(c->end - p)) {
      c->cur = p + size;
      return p;
    }
  }
  if (size > ARENA_CHUNK / 4) {
    /* A large block gets a chunk of its own, linked behind the current one
     * so the free space left there is still used by later small requests. */
    arena_chunk *big = chunk_new(size);
    if (!big)
      return NULL;
    unsigned char *p = align_up(big->cur);
    big->cur = p + size;
    if (c) {
      big->next = c->next;
      c->next = big;
    } else {
      a->head = big;
    }
    return p;
  }
  arena_chunk *fresh = chunk_new(ARENA_CHUNK);
  if (!fresh)
    return NULL;
  fresh->next = c;
  a->head = fresh;
  unsigned char *p = align_up(fresh->cur);
  fresh->cur = p + size;
  return p;
}

char *dgp_arena_strdup(dg_arena *a, const char *s) {
  if (!s)
    return NULL;
  size_t n = strlen(s) + 1;
  char *d = dgp_arena_alloc(a, n);
  if (d)
    memcpy(d, s, n);
  return d;
}

void dgp_arena_free(dg_arena *a) {
  if (!a)
    return;
  arena_chunk *c = a->head;
  while (c) {
    arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  free(a);
}

/* ------------------------------------------------------------------------ */
/* JSON pointers (RFC 6901)                                                 */

void dgp_pointer_append(char *buf, size_t size, const char *base, const char *token) {
  if (!buf || size == 0)
    return;
  if (!base)
    base = "";
  if (!token)
    token = "";
  /* `base` may be `buf` itself (appending in place). */
  size_t len = strlen(base);
  if (len > size - 1)
    len = size - 1;
  if (base != buf)
    memmove(buf, base, len);
  buf[len] = '\0';
  if (len + 1 >= size)
    return;
  buf[len++] = '/';
  for (const char *t = token; *t; t++) {
    const char *esc = *t == '~' ? "~0" : *t == '/' ? "~1" : NULL;
    size_t need = esc ? 2 : 1;
    /* Stop rather than split an escape: a truncated path stays valid. */
    if (len + need >= size)
      break;
    if (esc) {
      buf[len++] = esc[0];
      buf[len++] = esc[1];
    } else {
      buf[len++] = *t;
    }
  }
  buf[len] = '\0';
}

void dgp_pointer_index(char *buf, size_t size, const char *base, size_t index) {
  char token[32];
  snprintf(token, sizeof token, "%zu", index);
  dgp_pointer_append(buf, size, base, token);
}

/* ------------------------------------------------------------------------ */
/* Ranges in messages                                                       */

const char *dgp_range_text(char *buf, size_t size, unsigned flags, double min, double max,
                          dg_range_style style) {
  if (!buf || size == 0)
    return buf;
  buf[0] = '\0';
  bool lower_closed = (flags & DG_P_MIN) && !(flags & DG_P_MIN_EXCL);
  bool upper_closed = (flags & DG_P_MAX) && !(flags & DG_P_MAX_EXCL);
  if (style == DG_RANGE_INTERVAL && lower_closed && upper_closed) {
    snprintf(buf, size, "in [%g, %g]", min, max);
    return buf;
  }
  if (flags & DG_P_MIN_EXCL)
    snprintf(buf, size, "> %g", min);
  else if (flags & DG_P_MIN)
    snprintf(buf, size, ">= %g", min);
  size_t l = strlen(buf);
  if (flags & DG_P_MAX_EXCL)
    snprintf(buf + l, size - l, "%s< %g", l ? " and " : "", max);
  else if (flags & DG_P_MAX)
    snprintf(buf + l, size - l, "%s<= %g", l ? " and " : "", max);
  if (style == DG_RANGE_INTERVAL && !buf[0])
    snprintf(buf, size, "finite");
  return buf;
}

/* ------------------------------------------------------------------------ */
/* Suggestions                                                              */

/* Optimal string alignment distance (Levenshtein plus adjacent
 * transpositions), ASCII case-insensitive: "ratoi" is one edit from "ratio",
 * as a typist would count it. Three rolling rows of the DP table, on the
 * stack for names of ordinary length. */
#define EDIT_STACK_LEN 64

static int clamp_int(size_t v) { return v < (size_t)INT_MAX ? (int)v : INT_MAX; }

int dgp_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la == 0 || lb == 0)
    return clamp_int(la + lb);
  if (la >= (size_t)INT_MAX / 2 || lb >= (size_t)INT_MAX / 2)
    return INT_MAX;
  int small[3 * (EDIT_STACK_LEN + 1)];
  int *rows = small;
  if (lb > EDIT_STACK_LEN) {
    rows = malloc(3 * (lb + 1) * sizeof *rows);
    if (!rows)
      return INT_MAX;
  }
  int *prev2 = rows, *prev = rows + (lb + 1), *cur = rows + 2 * (lb + 1);
  for (size_t j = 0; j <= lb; j++)
    prev[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = (int)i;
    int ca = tolower((unsigned char)a[i - 1]);
    for (size_t j = 1; j <= lb; j++) {
      int cb = tolower((unsigned char)b[j - 1]);
      int best = prev[j - 1] + (ca != cb);
      if (prev[j] + 1 < best)
        best = prev[j] + 1;
      if (cur[j - 1] + 1 < best)
        best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
        best = prev2[j - 2] + 1;
      cur[j] = best;
    }
    int *t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  int d = prev[lb];
  if (rows != small)
    free(rows);
  return d;
}

/* Whether `part` is `whole` up to a "_" boundary: "redline" of
 * "redline_rpm", a key written without its unit suffix. */
static bool is_word_prefix(const char *part, const char *whole) {
  size_t n = strlen(part);
  return n >= 3 && strncmp(part, whole, n) == 0 && whole[n] == '_';
}

/* A suggestion must be close relative to the word (a third of its letters,
 * at least one edit) and must not be a complete rewrite of a short name
 * ("x" is not a typo of "k"). Ties go to the earlier candidate. Failing
 * that, a name that differs by a whole "_" suffix (a unit) is offered. */
const char *dg_suggest(const char *word, const char *const *candidates, int n) {
  if (!word || !candidates)
    return NULL;
  /* a name that looks the same (another script's letter, another form of
   * an accent, another case) before one that is a typo away */
  for (int i = 0; i < n; i++)
    if (candidates[i] && dgp_text_lookalike(word, candidates[i]))
      return candidates[i];
  size_t lw = strlen(word);
  size_t limit = lw / 3 > 1 ? lw / 3 : 1;
  const char *best = NULL;
  size_t best_d = SIZE_MAX;
  for (int i = 0; i < n; i++) {
    const char *c = candidates[i];
    if (!c)
      continue;
    size_t lc = strlen(c);
    size_t longest = lc > lw ? lc : lw;
    if (longest - (lc < lw ? lc : lw) > limit)
      continue; /* the length difference alone is too large */
    size_t d = (size_t)dgp_edit_distance(word, c);
    if (d <= limit && d < longest && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  for (int i = 0; !best && i < n; i++) {
    const char *c = candidates[i];
    if (c && (is_word_prefix(word, c) || is_word_prefix(c, word)))
      best = c;
  }
  return best;
}

/* ------------------------------------------------------------------------ */
/* Files and JSON                                                           */

/* The size limit of graph and scenario texts (docs/errors.md): the
 * environment's DRIVEGRAPH_MAX_INPUT_SIZE (bytes, or with a suffix k, M or
 * G of 1024, 1024² and 1024³), else DG_INPUT_LIMIT_DEFAULT. 0, or -1 with
 * the reason for a value that is not a size. */
static int input_limit(size_t *limit, char *why, size_t size) {
  *limit = DG_INPUT_LIMIT_DEFAULT;
  const char *s = getenv("DRIVEGRAPH_MAX_INPUT_SIZE");
  if (!s || !s[0])
    return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  unsigned long long mult = 1;
  if (*end == 'k' || *end == 'K')
    mult = 1024ull, end++;
  else if (*end == 'm' || *end == 'M')
    mult = 1024ull * 1024, end++;
  else if (*end == 'g' || *end == 'G')
    mult = 1024ull * 1024 * 1024, end++;
  if (end == s || *end || errno || v == 0 || s[0] == '-' || v > SIZE_MAX / 2 / mult) {
    char shown[64];
    dg_text_escape(shown, sizeof shown, s);
    snprintf(why, size,
             "DRIVEGRAPH_MAX_INPUT_SIZE=\"%s\" is not a size: expected bytes > 0 as 1048576, "
             "64k, 16M or 1G",
             shown);
    return -1;
  }
  *limit = (size_t)(v * mult);
  return 0;
}

size_t dg_input_size_limit(void) {
  size_t limit;
  char why[8];
  input_limit(&limit, why, sizeof why);
  return limit;
}

/* "over the limit" text for `what` of `bytes` (at least, when `more`). */
static void too_big(char *why, size_t size, const char *what, size_t bytes, bool more,
                    size_t limit) {
  snprintf(why, size,
           "%s is %s%zu bytes, over the limit of %zu bytes for graph and scenario texts "
           "(DRIVEGRAPH_MAX_INPUT_SIZE raises it)",
           what, more ? "over " : "", bytes, limit);
}

int dgp_input_size_check(size_t bytes, char *why, size_t size) {
  size_t limit;
  if (input_limit(&limit, why, size) != 0)
    return -1;
  if (bytes > limit) {
    too_big(why, size, "the text", bytes, false, limit);
    return -1;
  }
  return 0;
}

char *dgp_read_input(const char *path, size_t *len, char *why, size_t why_size) {
  if (!path) {
    snprintf(why, why_size, "no file name given");
    return NULL;
  }
  size_t limit;
  if (input_limit(&limit, why, why_size) != 0)
    return NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(why, why_size, "cannot read file: %s", strerror(errno));
    return NULL;
  }
  /* A file of known size over the limit is refused before a byte of it is
   * read; pipes and /dev/stdin, which have none, when they pass it. */
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size > limit) {
    too_big(why, why_size, "the file", (size_t)st.st_size, false, limit);
    fclose(f);
    return NULL;
  }
  size_t cap = 8192, n = 0;
  char *buf = malloc(cap);
  int fail = buf ? 0 : ENOMEM;
  while (!fail) {
    if (cap - n < 2) {
      size_t bigger = cap * 2;
      if (bigger > limit + 2)
        bigger = limit + 2;
      char *nb = bigger > cap ? realloc(buf, bigger) : NULL;
      if (!nb) {
        fail = bigger > cap ? ENOMEM : EFBIG;
        break;
      }
      buf = nb;
      cap = bigger;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (n > limit) {
      fail = EFBIG;
      break;
    }
    if (got == 0) {
      if (ferror(f))
        fail = errno ? errno : EIO;
      break;
    }
  }
  fclose(f);
  if (fail) {
    free(buf);
    if (fail == EFBIG)
      too_big(why, why_size, "the file", limit, true, limit);
    else
      snprintf(why, why_size, "cannot read file: %s", strerror(fail));
    return NULL;
  }
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

const char *dgp_json_type_name(const json_t *v) {
  if (!v)
    return "nothing";
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "object";
  case JSON_ARRAY:
    return "array";
  case JSON_STRING:
    return "string";
  case JSON_INTEGER:
  case JSON_REAL:
    return "number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "boolean";
  case JSON_NULL:
    return "null";
  }
  return "value";
}

/* Number of UTF-8 code points in s[0..n): jansson counts columns that way. */
static int utf8_length(const char *s, size_t n) {
  int count = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80)
      count++;
  return count;
}

/* jansson quotes the offending token as "... near '<token>'" (only when it is
 * at most 20 bytes). Copies the token into tok and returns the message part
 * before it, or returns the whole message with tok empty. */
static void split_near(const char *msg, char *head, size_t head_size, char *tok, size_t tok_size) {
  const char *near = strstr(msg, " near '");
  size_t mlen = strlen(msg);
  tok[0] = '\0';
  if (!near || mlen < 1 || msg[mlen - 1] != '\'') {
    snprintf(head, head_size, "%s", msg);
    return;
  }
  const char *t = near + 7;
  size_t tlen = (size_t)(msg + mlen - 1 - t);
  snprintf(head, head_size, "%.*s", (int)(near - msg), msg);
  snprintf(tok, tok_size, "%.*s", (int)tlen, t);
}

/* The JSON string literal that ends just before byte `end` of text (the
 * duplicate key jansson has just read), or false. */
static bool key_literal_before(const char *text, size_t end, size_t *start) {
  if (end < 2 || text[end - 1] != '"')
    return false;
  for (size_t i = end - 1; i-- > 0;) {
    if (text[i] != '"')
      continue;
    size_t slashes = 0;
    while (slashes < i && text[i - 1 - slashes] == '\\')
      slashes++;
    if (slashes % 2 == 0) {
      *start = i;
      return true;
    }
  }
  return false;
}

static bool is_blank(const char *s) {
  for (; *s; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
      return false;
  return true;
}

static bool is_non_finite_word(const char *tok) {
  static const char *const words[] = {"nan",  "-nan",     "+nan",      "inf",      "-inf",
                                      "+inf", "infinity", "-infinity", "+infinity"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t k = 0;
    while (words[i][k] && tolower((unsigned char)tok[k]) == words[i][k])
      k++;
    if (!words[i][k] && !tok[k])
      return true;
  }
  return false;
}

/* Whether the token that ends at byte `end` (of length `toklen`) starts a
 * NaN or Infinity literal. The word is read from the text because jansson
 * gives up at the first character it cannot use: "-" of "-Infinity". */
static bool non_finite_at(const char *text, int end, size_t toklen, char *word, size_t size) {
  if (end < 0 || (size_t)end < toklen || (size_t)end > strlen(text))
    return false;
  const char *p = text + ((size_t)end - toklen);
  size_t n = 0;
  while (n + 1 < size && (isalpha((unsigned char)p[n]) || (n == 0 && (p[0] == '-' || p[0] == '+'))))
    n++;
  memcpy(word, p, n);
  word[n] = '\0';
  return is_non_finite_word(word);
}

/* Turns jansson's error into ours: a clear lowercase text, and the column of
 * the start of the offending token (jansson reports its last character). */
static void report_json_error(const char *text, const json_error_t *je, dg_diag *diag) {
  int line = je->line > 0 ? je->line : 1;
  int column = je->column;
  char head[JSON_ERROR_TEXT_LENGTH], tok[JSON_ERROR_TEXT_LENGTH];
  split_near(je->text, head, sizeof head, tok, sizeof tok);
  if (tok[0] && !strchr(tok, '\n')) {
    int back = utf8_length(tok, strlen(tok)) - 1;
    if (column - back >= 1)
      column -= back;
  }
  if (column < 1)
    column = 1;
  /* Our messages start lowercase, but an acronym stays as it is ("NUL
   * byte in object key ...", not "nUL byte"). */
  if (head[0] >= 'A' && head[0] <= 'Z' && !(head[1] >= 'A' && head[1] <= 'Z'))
    head[0] = (char)(head[0] - 'A' + 'a');

  switch (json_error_code(je)) {
  case json_error_duplicate_key: {
    /* The token may be missing (long keys), so take the key from the text:
     * jansson stops right after its closing quote. */
    size_t end = je->position > 0 ? (size_t)je->position : 0, start;
    if (end <= strlen(text) && key_literal_before(text, end, &start)) {
      int key_column = je->column - utf8_length(text + start, end - start) + 1;
      diag_at(diag, DG_ERR_SYNTAX, line, key_column >= 1 ? key_column : 1,
              "duplicate object key %.*s", (int)(end - start), text + start);
    } else {
      diag_at(diag, DG_ERR_SYNTAX, line, column, "duplicate object key%s%s", tok[0] ? " " : "",
              tok);
    }
    return;
  }
  case json_error_end_of_input_expected:
    diag_at(diag, DG_ERR_SYNTAX, line, column,
            "unexpected text after the end of the JSON document near '%s'", tok);
    return;
  default:
    break;
  }
  char word[16];
  if (tok[0] && non_finite_at(text, je->position, strlen(tok), word, sizeof word)) {
    diag_at(diag, DG_ERR_SYNTAX, line, column,
            "invalid number '%s': NaN and Infinity are not allowed in JSON", word);
    return;
  }
  if (strncmp(head, "'[' or '{' expected", 19) == 0) {
    if (tok[0])
      diag_at(diag, DG_ERR_SYNTAX, line, column, "expected a JSON object, got '%s'", tok);
    else
      diag_at(diag, DG_ERR_SYNTAX, line, column, "expected a JSON object");
    return;
  }
  if (tok[0])
    diag_at(diag, DG_ERR_SYNTAX, line, column, "%s near '%s'", head, tok);
  else
    diag_at(diag, DG_ERR_SYNTAX, line, column, "%s", head);
}

/* What jansson's tree of a text will take, estimated from one scan of it
 * without parsing it (docs/errors.md, "Bounded input"): about 48 bytes per
 * value (each comma, colon and opening bracket outside strings starts
 * one), 100 more per array or object, 40 more per object key; strings
 * take their length, which the text's size already counts. Brackets past
 * jansson's depth limit are not counted: parsing stops there. */
static size_t tree_estimate(const char *text) {
  size_t values = 1, containers = 0, keys = 0, depth = 0;
  bool in_string = false;
  for (const char *p = text; *p; p++) {
    if (in_string) {
      if (*p == '\\' && p[1])
        p++;
      else if (*p == '"')
        in_string = false;
      continue;
    }
    switch (*p) {
    case '"':
      in_string = true;
      break;
    case ',':
      values++;
      break;
    case ':':
      values++;
      keys++;
      break;
    case '[':
    case '{':
      if (++depth > 2048)
        return 48 * values + 100 * containers + 40 * keys;
      values++;
      containers++;
      break;
    case ']':
    case '}':
      depth -= depth > 0;
      break;
    default:
      break;
    }
  }
  return 48 * values + 100 * containers + 40 * keys;
}

json_t *dgp_json_parse(const char *text, const char *file, dg_diag *diag) {
  (void)file; /* the collector already names the file */
  if (!text)
    text = "";
  /* A UTF-8 byte order mark, as some editors write, is not an error
   * (RFC 8259 lets parsers ignore it); it is invisible, so columns are
   * counted after it. */
  if ((unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
      (unsigned char)text[2] == 0xBF)
    text += 3;
  if (is_blank(text)) {
    diag_at(diag, DG_ERR_SYNTAX, 1, 1, "empty file, expected a JSON object");
    return NULL;
  }
  /* texts given as strings have the files' limit too (dgp_read_input) */
  char why[DG_ERROR_TEXT_LEN];
  if (dgp_input_size_check(strlen(text), why, sizeof why) != 0) {
    dgp_diag_add(diag, DG_ERR_RANGE, "", "%s", why);
    return NULL;
  }
  /* Memory: a text whose tree would take more than DG_INPUT_MEMORY_FACTOR
   * times its size (beyond DG_INPUT_MEMORY_SLACK) is refused before it is
   * parsed. */
  size_t bytes = strlen(text), tree = tree_estimate(text);
  if (tree > DG_INPUT_MEMORY_FACTOR * bytes + DG_INPUT_MEMORY_SLACK) {
    dgp_diag_add(diag, DG_ERR_RANGE, "",
                "the text's %zu bytes would parse into about %zu MB (%zu times their size, more "
                "than the limit of %d): it is too dense in values (small arrays, empty ones)",
                bytes, tree >> 20, tree / (bytes ? bytes : 1), DG_INPUT_MEMORY_FACTOR);
    return NULL;
  }
  json_error_t je;
  /* Defaults on purpose: the top level must be an object or array, trailing
   * text is an error, NUL escapes are refused. */
  json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  if (!root)
    report_json_error(text, &je, diag);
  return root;
}
