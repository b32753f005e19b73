/* The kinks of the signal blocks (abs, min_max, limiter, lookup,
 * rate_limiter, comparator) as modes held over each step segment.
 *
 * A piecewise-smooth signal block keeps, for each boundary it has (a value
 * against zero, a against b, an input against a limit), the side of it the
 * segment started on and computes its output by that side's formula over
 * the whole segment (|x| as +x or −x, min(a, b) as a or b); the solver
 * locates the crossing of the boundary as an event (g > 0 on the held side)
 * and the next segment starts on the other side. The output is therefore
 * smooth inside every segment and RK4 keeps its order across the kinks, as
 * pid does with its limits.
 *
 * A segment that starts on the boundary (within 1e-9 of the larger of the
 * two values compared) changes side when the previous segment was watching
 * the boundary (the crossing it located); otherwise (the start on a
 * boundary, a value that slides along one) it takes the side by position
 * at every point of the segment, the value leaving the boundary at the
 * segment's start, and watches no crossing of it: so a value that slides
 * along a boundary costs at most one located crossing per step. A private
 * header of blocks/. */
#ifndef DG_BLOCKS_SIGNAL_SIDE_H
#define DG_BLOCKS_SIGNAL_SIDE_H

#include <drivegraph/block.h>

#include <math.h>
#include <stdbool.h>

/* One boundary's held side: `above` while the compared value exceeds the
 * boundary; `watch` while the segment locates the crossing. */
typedef struct signal_side {
  bool above;
  bool watch;
  bool set;  /* decided at a segment start at least once */
  bool free; /* the segment started on the boundary with no side known */
} signal_side;

/* Decides the side at a segment start from value v against boundary b. */
static inline void signal_side_decide(signal_side *s, double v, double b) {
  double g = v - b;
  bool first = !s->set;
  s->set = true;
  s->free = false;
  if (fabs(g) > 1e-9 * dg_fmax(fabs(v), fabs(b))) {
    s->above = g > 0.0;
    s->watch = true;
    return;
  }
  if (!first && s->watch) /* on the boundary after a located crossing */
    s->above = !s->above;
  else /* which way it will leave is unknown: by position */
    s->free = true;
  s->watch = false;
}

/* The event function: > 0 while v stays on the held side of b, +1 when the
 * boundary is not watched. */
static inline double signal_side_event(const signal_side *s, double v, double b) {
  if (!s->watch)
    return 1.0;
  return s->above ? v - b : b - v;
}

/* The side in force at a point: the held one; the side v is on before the
 * first segment (a signal read at the start) and over a segment that
 * started on the boundary not knowing which way v would leave it (it
 * leaves at the segment's start, so the kink falls there). */
static inline bool signal_side_above(const signal_side *s, double v, double b) {
  return s->set && !s->free ? s->above : v > b;
}

#endif
