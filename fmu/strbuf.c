/* A growing string (strbuf.h). */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(strbuf *b) { memset(b, 0, sizeof *b); }

static bool reserve(strbuf *b, size_t more) {
  if (b->failed)
    return false;
  if (b->len + more + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1)
    cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->failed = true;
    return false;
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void strbuf_puts(strbuf *b, const char *s) {
  size_t n = strlen(s);
  if (!reserve(b, n))
    return;
  memcpy(b->s + b->len, s, n + 1);
  b->len += n;
}

void strbuf_printf(strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !reserve(b, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void strbuf_attr(strbuf *b, const char *name, const char *value) {
  strbuf_printf(b, " %s=\"", name);
  for (const unsigned char *p = (const unsigned char *)(value ? value : ""); *p; p++) {
    switch (*p) {
    case '&':
      strbuf_puts(b, "&amp;");
      break;
    case '<':
      strbuf_puts(b, "&lt;");
      break;
    case '>':
      strbuf_puts(b, "&gt;");
      break;
    case '"':
      strbuf_puts(b, "&quot;");
      break;
    case '\'':
      strbuf_puts(b, "&apos;");
      break;
    case '\t':
      strbuf_puts(b, "&#9;");
      break;
    case '\n':
      strbuf_puts(b, "&#10;");
      break;
    case '\r':
      strbuf_puts(b, "&#13;");
      break;
    default:
      if (*p < 0x20) /* not allowed in XML 1.0 at all: left out */
        break;
      if (reserve(b, 1)) {
        b->s[b->len++] = (char)*p;
        b->s[b->len] = '\0';
      }
    }
  }
  strbuf_puts(b, "\"");
}

char *strbuf_take(strbuf *b) {
  char *s = b->failed ? NULL : b->s;
  if (!s && !b->failed)
    s = calloc(1, 1);
  if (b->failed)
    free(b->s);
  strbuf_init(b);
  return s;
}

void strbuf_free(strbuf *b) {
  free(b->s);
  strbuf_init(b);
}
