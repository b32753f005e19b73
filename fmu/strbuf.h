/* A growing string for the FMU's generated texts (fmu/strbuf.c). A failed
 * allocation is remembered: strbuf_take then returns NULL. */
#ifndef DG_FMU_STRBUF_H
#define DG_FMU_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
  char *s;
  size_t len, cap;
  bool failed;
} strbuf;

void strbuf_init(strbuf *b);
void strbuf_puts(strbuf *b, const char *s);
void strbuf_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ` name="value"` with the value escaped for XML (& < > " ' and control
 * characters as character references; tabs and newlines kept as such). */
void strbuf_attr(strbuf *b, const char *name, const char *value);
/* The text (malloc'ed; the buffer is empty again), or NULL after a failed
 * allocation. */
char *strbuf_take(strbuf *b);
void strbuf_free(strbuf *b);

#endif
