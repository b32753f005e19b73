/* Graph loading and checks: the invalid corpus (every problem, in order,
 * with path and message), the good example graphs, and the API. */
#include "internal.h"
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct collected {
  char text[8192];
  size_t len;
  int count;
} collected;

static void collect(const dg_error *err, void *user) {
  collected *c = user;
  char line[1024];
  dg_error_format(err, line, sizeof line);
  c->len += (size_t)snprintf(c->text + c->len, sizeof c->text - c->len, "%s\n", line);
  c->count += err->code != DG_OK; /* warnings are listed, not counted */
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  char *buf = calloc(1, 1 << 16);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every tests/data/invalid/NAME.json reports exactly NAME.expected. */
START_TEST(test_invalid_corpus) {
  char dir[1024];
  dg_test_path(dir, sizeof dir, "tests/data/invalid");
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "no %s", dir);
  char *names[256];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 256) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0)
      names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], cmp);
  ck_assert_int_ge(n, 24);
  dg_registry *reg = dg_test_registry();
  for (int i = 0; i < n; i++) {
    char path[1200], expath[1200];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    snprintf(expath, sizeof expath, "%s/%.*s.expected", dir, (int)strlen(names[i]) - 5, names[i]);
    char *text = slurp(path), *expected = slurp(expath);
    collected got = {.len = 0};
    dg_graph_info info;
    int count = dg_graph_validate_string(reg, text, names[i], collect, &got, &info);
    ck_assert_msg(count > 0, "%s validated", names[i]);
    ck_assert_int_eq(count, got.count);
    ck_assert_msg(strcmp(got.text, expected) == 0, "%s:\n--- got\n%s--- expected\n%s", names[i],
                  got.text, expected);
    /* loading reports the first of them */
    dg_error err;
    ck_assert_ptr_null(dg_graph_load_string(reg, text, names[i], &err));
    char first[1024];
    dg_error_format(&err, first, sizeof first);
    ck_assert_msg(strncmp(expected, first, strlen(first)) == 0, "%s: first error %s", names[i],
                  first);
    free(text);
    free(expected);
    free(names[i]);
  }
  dg_registry_free(reg);
}
END_TEST

START_TEST(test_error_codes_and_fields) {
  dg_error err = dg_test_graph_error("{\"drivegraph\":1,\"blocks\":{\"g\":{\"type\":\"gear\","
                                     "\"ratio\":-2}},\"connections\":[]}");
  ck_assert_int_eq(err.code, DG_ERR_RANGE);
  ck_assert_str_eq(err.file, "test.json");
  ck_assert_str_eq(err.path, "/blocks/g/ratio");
  ck_assert_str_eq(err.text, "must be > 0 (got -2)");
  ck_assert_int_eq(err.line, 0);
  ck_assert_str_eq(dg_code_name(err.code), "ERR_RANGE");

  err = dg_test_graph_error("{\"drivegraph\":1,\n \"blocks\": }");
  ck_assert_int_eq(err.code, DG_ERR_SYNTAX);
  ck_assert_int_eq(err.line, 2);
  ck_assert_int_gt(err.column, 0);

  err = dg_test_graph_error("{\"drivegraph\":1,\"blocks\":{\"g\":{\"type\":\"gear\",\"ratio\":2},"
                            "\"h\":{\"type\":\"gear\",\"ratio\":2}},"
                            "\"connections\":[[\"g.in\",\"h.in\"]]}");
  ck_assert_int_eq(err.code, DG_ERR_PORT);
  ck_assert_str_eq(err.path, "/connections/0");

  dg_graph *g = dg_graph_load_file(NULL, "/nonexistent/graph.json", &err);
  ck_assert_ptr_null(g);
  ck_assert_int_eq(err.code, DG_ERR_IO);
  ck_assert_str_eq(err.file, "/nonexistent/graph.json");
  ck_assert_str_eq(err.text, "cannot read file: No such file or directory");
}
END_TEST

/* Connections may be written in either order; they are stored out → in. */
START_TEST(test_connection_order_and_accessors) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"name\":\"rig\",\"blocks\":{"
                              "\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
                              "\"ld\":{\"type\":\"load\",\"inertia\":1}},"
                              "\"connections\":[[\"ld.in\",\"src.out\"]]}");
  ck_assert_str_eq(dg_graph_name(g), "rig");
  ck_assert_int_eq(dg_graph_block_count(g), 2);
  ck_assert_str_eq(dg_graph_block_id(g, 1), "ld");
  ck_assert_str_eq(dg_graph_block_type(g, 1), "load");
  ck_assert_int_eq(dg_graph_connection_count(g), 1);
  const char *from, *to;
  dg_graph_connection(g, 0, &from, &to);
  ck_assert_str_eq(from, "src.out");
  ck_assert_str_eq(to, "ld.in");
  dg_graph_free(g);
  dg_graph_free(NULL);
}
END_TEST

/* The example graphs validate, with their DOF counts. */
START_TEST(test_example_graphs) {
  static const struct {
    const char *file;
    int blocks, connections, dofs, modes;
  } cases[] = {
      {"graphs/gear_train.json", 5, 4, 1, 2}, /* the dyno's Coulomb friction sticks */
      {"graphs/open_diff_axle.json", 5, 4, 2, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[1024];
    dg_test_path(path, sizeof path, cases[i].file);
    dg_graph_info info;
    int n = dg_graph_validate_file(NULL, path, NULL, NULL, &info);
    ck_assert_msg(n == 0, "%s: %d problems", cases[i].file, n);
    ck_assert_int_eq(info.blocks, cases[i].blocks);
    ck_assert_int_eq(info.connections, cases[i].connections);
    ck_assert_int_eq(info.dofs, cases[i].dofs);
    ck_assert_int_eq(info.modes, cases[i].modes);
  }
}
END_TEST

/* validate checks every mode: 2 couplers give 4 combinations. They sit on
 * either side of "mid", a shaft with inertia, so they are independent
 * groups: the start, c1 alone and c2 alone are built (3) and cover the 4. */
START_TEST(test_modes_enumerated) {
  dg_registry *reg = dg_test_registry();
  const char *json = "{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
                     "\"c1\":{\"type\":\"test_coupler\"},"
                     "\"mid\":{\"type\":\"inertia\",\"inertia\":0.5},"
                     "\"c2\":{\"type\":\"test_coupler\"},"
                     "\"ld\":{\"type\":\"load\",\"inertia\":1}},"
                     "\"connections\":[[\"src.out\",\"c1.in\"],[\"c1.out\",\"mid.in\"],"
                     "[\"mid.out\",\"c2.in\"],[\"c2.out\",\"ld.in\"]]}";
  dg_graph_info info;
  ck_assert_int_eq(dg_graph_validate_string(reg, json, "m.json", NULL, NULL, &info), 0);
  ck_assert_int_eq(info.modes, 4);
  ck_assert_int_eq(info.modes_built, 3);
  ck_assert_double_eq(info.modes_covered, 4.0);
  ck_assert_double_eq(info.mode_combinations, 4.0);
  ck_assert_int_eq(info.mode_groups, 2);
  ck_assert_int_eq(info.dofs, 1);
  dg_registry_free(reg);
}
END_TEST

/* dg_graph_validate_load_file: the problems and, for a valid file, the
 * graph from the same load (a simulation of it can be made); NULL for an
 * invalid one, whose problems are all reported. */
START_TEST(test_validate_load_file) {
  char path[1024];
  dg_test_path(path, sizeof path, "graphs/gear_train.json");
  dg_graph_info info;
  dg_graph *g = (dg_graph *)1;
  ck_assert_int_eq(dg_graph_validate_load_file(NULL, path, NULL, NULL, &info, &g), 0);
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(info.blocks, dg_graph_block_count(g));
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  ck_assert_msg(sim != NULL, "%s", err.text);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_test_path(path, sizeof path, "tests/data/invalid/double_hold_deep_mode.json");
  g = (dg_graph *)1;
  ck_assert_int_eq(dg_graph_validate_load_file(NULL, path, NULL, NULL, &info, &g), 1);
  ck_assert_ptr_null(g);
  /* graph NULL: dg_graph_validate_file */
  ck_assert_int_eq(dg_graph_validate_load_file(NULL, path, NULL, NULL, NULL, NULL), 1);
}
END_TEST

/* The problems of a graph's every-mode check, one per line, each without
 * the mode it was found in; *count of them. With groups (opts 0) or every
 * combination (DGP_CHECK_NO_GROUPS). NULL: the graph does not load. */
static collected *mode_problems(const dg_registry *reg, const char *text, const char *name,
                                unsigned opts) {
  dg_error err;
  dg_graph *g = dgp_graph_load_string_opts(reg, text, name, DG_LOAD_NO_MODE_CHECK, &err);
  if (!g)
    return NULL;
  collected *c = calloc(1, sizeof *c);
  dg_diag d;
  dgp_diag_init(&d, name, collect, c);
  dgp_sim_check_modes_opts(g, opts, &d, NULL);
  dg_graph_free(g);
  for (char *m = strstr(c->text, " (in mode "); m; m = strstr(m, " (in mode ")) {
    char *eol = strchr(m, '\n');
    memmove(m, eol, strlen(eol) + 1);
  }
  return c;
}

/* A problem line of `sub` missing from `all`, or NULL. */
static const char *line_missing(const char *sub, const char *all) {
  static char line[1024];
  for (const char *p = sub; *p;) {
    size_t n = strcspn(p, "\n");
    snprintf(line, sizeof line, "%.*s\n", (int)n, p);
    if (!strstr(all, line))
      return line;
    p += n + (p[n] == '\n');
  }
  return NULL;
}

/* A pseudo-random number in [0, n) from the state *s (an LCG). */
static int pick(unsigned *s, int n) {
  *s = *s * 1103515245u + 12345u;
  return (int)((*s >> 16) % (unsigned)n);
}

/* A random drivetrain for seed: shafts joined by clutches, one-way
 * clutches, gears and flywheels, brakes on shafts, clutches closing loops
 * between earlier and later shafts, loads on shafts with nothing else;
 * one inertia in ten is 0 (DOFs without inertia in some modes). */
static void random_graph(unsigned seed, char *json, size_t size) {
  enum { MAX_SHAFTS = 24, MAX_PORTS = 8 };
  char shaft[MAX_SHAFTS][MAX_PORTS][16];
  int nport[MAX_SHAFTS] = {1}, nshaft = 1, switching = 0;
  unsigned s = seed * 2654435761u + 1u;
  size_t len = (size_t)snprintf(json, size,
                                "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":"
                                "\"torque_source\",\"inertia\":%s}",
                                pick(&s, 10) ? "0.2" : "0");
  snprintf(shaft[0][0], sizeof shaft[0][0], "src.out");
  int target = 3 + pick(&s, 9);
  for (int k = 1; k < 40 && switching < target && nshaft < MAX_SHAFTS; k++) {
    int kind = pick(&s, 7), at = pick(&s, nshaft);
    if (nport[at] >= MAX_PORTS - 1)
      continue;
    if (kind == 0) { /* a brake on a shaft */
      len += (size_t)snprintf(json + len, size - len,
                              ",\"b%d\":{\"type\":\"brake\",\"max_torque\":50}", k);
      snprintf(shaft[at][nport[at]++], 16, "b%d.in", k);
      switching++;
      continue;
    }
    if (kind == 1 && nshaft >= 2) { /* a clutch closing a loop */
      int a = pick(&s, nshaft - 1), b = a + 1 + pick(&s, nshaft - 1 - a);
      if (nport[a] >= MAX_PORTS - 1 || nport[b] >= MAX_PORTS - 1)
        continue;
      len += (size_t)snprintf(json + len, size - len,
                              ",\"b%d\":{\"type\":\"clutch\",\"max_torque\":80}", k);
      snprintf(shaft[a][nport[a]++], 16, "b%d.in", k);
      snprintf(shaft[b][nport[b]++], 16, "b%d.out", k);
      switching++;
      continue;
    }
    static const char *const types[] = {"clutch\",\"max_torque\":100", "one_way_clutch\"",
                                        "gear\",\"ratio\":2", "gear\",\"ratio\":0.5",
                                        "inertia\",\"inertia\":0.1"};
    int t = pick(&s, 5);
    const char *zero = t == 4 && pick(&s, 10) == 0 ? "inertia\",\"inertia\":0" : types[t];
    len += (size_t)snprintf(json + len, size - len, ",\"b%d\":{\"type\":\"%s}", k, zero);
    switching += t <= 1;
    snprintf(shaft[at][nport[at]++], 16, "b%d.in", k);
    snprintf(shaft[nshaft][0], 16, "b%d.out", k);
    nport[nshaft++] = 1;
  }
  for (int i = 0; i < nshaft; i++)
    if (nport[i] == 1) {
      len += (size_t)snprintf(json + len, size - len, ",\"l%d\":{\"type\":\"load\",\"inertia\":%s}",
                              i, pick(&s, 10) ? "0.5" : "0");
      snprintf(shaft[i][nport[i]++], 16, "l%d.in", i);
    }
  len += (size_t)snprintf(json + len, size - len, "},\"connections\":[");
  for (int i = 0, first = 1; i < nshaft; i++) {
    len += (size_t)snprintf(json + len, size - len, "%s[", first ? "" : ",");
    first = 0;
    for (int p = 0; p < nport[i]; p++)
      len += (size_t)snprintf(json + len, size - len, "%s\"%s\"", p ? "," : "", shaft[i][p]);
    len += (size_t)snprintf(json + len, size - len, "]");
  }
  snprintf(json + len, size - len, "]}");
}

/* Compares the check by groups with every combination on one graph; false
 * when it does not load (without the check). */
static bool groups_match(const dg_registry *reg, const char *text, const char *name, int *invalid) {
  collected *grouped = mode_problems(reg, text, name, 0);
  collected *all = mode_problems(reg, text, name, DGP_CHECK_NO_GROUPS);
  bool loaded = grouped && all;
  if (loaded) {
    ck_assert_msg((grouped->count > 0) == (all->count > 0), "%s: %d problems by groups, %d", name,
                  grouped->count, all->count);
    const char *miss = line_missing(grouped->text, all->text);
    ck_assert_msg(!miss, "%s: by groups only: %s", name, miss ? miss : "");
    *invalid += all->count > 0;
  }
  free(grouped);
  free(all);
  return loaded;
}

/* The check by groups against every combination, on the example graphs,
 * the invalid corpus and 120 random drivetrains (within 4096 combinations,
 * where every combination is built): the same verdict, and no problem the
 * combinations do not show. (It may name fewer: a loop of contradicting
 * ratios names the shafts it holds, which other groups' modes change.) */
START_TEST(test_groups_match_every_combination) {
  const char *dirs[] = {"graphs", "tests/data/invalid"};
  dg_registry *reg = dg_test_registry();
  int compared = 0, invalid = 0;
  for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
    char dir[1024];
    dg_test_path(dir, sizeof dir, dirs[k]);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no %s", dir);
    struct dirent *e;
    while ((e = readdir(d))) {
      size_t len = strlen(e->d_name);
      if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0)
        continue;
      char path[1200];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      char *text = slurp(path);
      compared += groups_match(reg, text, e->d_name, &invalid);
      free(text);
    }
    closedir(d);
  }
  for (unsigned seed = 0; seed < 120; seed++) {
    char json[16384], name[32];
    random_graph(seed, json, sizeof json);
    snprintf(name, sizeof name, "random_%u.json", seed);
    compared += groups_match(reg, json, name, &invalid);
  }
  dg_registry_free(reg);
  fprintf(stderr, "groups vs every combination: %d graphs, %d with problems\n", compared, invalid);
  ck_assert_int_ge(compared, 60);
  ck_assert_int_ge(invalid, 30);
}
END_TEST

/* 13 clutches in a line (2 modes each: 8192 combinations), each between
 * shafts with inertia: 13 independent groups of one clutch, so the start
 * and each clutch alone (1 + 13 = 14 builds) cover all 8192. */
START_TEST(test_modes_partial_reported) {
  char json[8192];
  size_t len = (size_t)snprintf(json, sizeof json, "{\"drivegraph\":1,\"blocks\":{"
                                "\"eng\":{\"type\":\"torque_source\",\"inertia\":0.2}");
  for (int i = 0; i < 13; i++)
    len += (size_t)snprintf(json + len, sizeof json - len,
                            ",\"c%d\":{\"type\":\"clutch\",\"max_torque\":100,"
                            "\"inputs\":{\"pedal\":0}},\"j%d\":{\"type\":\"inertia\","
                            "\"inertia\":0.1}",
                            i, i);
  len += (size_t)snprintf(json + len, sizeof json - len, "},\"connections\":[");
  for (int i = 0; i < 13; i++) {
    char prev[16];
    snprintf(prev, sizeof prev, i ? "j%d.out" : "eng.out", i - 1);
    len += (size_t)snprintf(json + len, sizeof json - len,
                            "%s[\"%s\",\"c%d.in\"],[\"c%d.out\",\"j%d.in\"]", i ? "," : "",
                            prev, i, i, i);
  }
  snprintf(json + len, sizeof json - len, "]}");
  dg_graph_info info;
  ck_assert_int_eq(dg_graph_validate_string(NULL, json, "c13.json", NULL, NULL, &info), 0);
  ck_assert_int_eq(info.modes, 8192);
  ck_assert_int_eq(info.modes_built, 14);
  ck_assert_double_eq(info.mode_combinations, 8192.0);
  ck_assert_double_eq(info.modes_covered, 8192.0);
  ck_assert_int_eq(info.mode_groups, 13);
  ck_assert_int_eq(info.partial_groups, 0);
  ck_assert_int_eq(info.mode_level, 0);
  ck_assert_int_eq(info.switching_blocks, 13);
}
END_TEST

/* Groups multiply: clutches a0, a1 side by side between eng and m (one
 * group: their ties join the same two shafts, 4 combinations), b0..b2 side
 * by side between m and ld (one group, 8), m with inertia between them.
 * Built: the start, 3 more of a's, 7 more of b's = 11; covered 4 × 8 = 32. */
START_TEST(test_modes_groups_multiply) {
  const char *json =
      "{\"drivegraph\":1,\"blocks\":{\"eng\":{\"type\":\"torque_source\",\"inertia\":0.2},"
      "\"m\":{\"type\":\"inertia\",\"inertia\":0.1},\"ld\":{\"type\":\"inertia\",\"inertia\":0.1},"
      "\"a0\":{\"type\":\"clutch\",\"max_torque\":100,\"inputs\":{\"pedal\":0}},"
      "\"a1\":{\"type\":\"clutch\",\"max_torque\":100,\"inputs\":{\"pedal\":0}},"
      "\"b0\":{\"type\":\"clutch\",\"max_torque\":100,\"inputs\":{\"pedal\":0}},"
      "\"b1\":{\"type\":\"clutch\",\"max_torque\":100,\"inputs\":{\"pedal\":0}},"
      "\"b2\":{\"type\":\"clutch\",\"max_torque\":100,\"inputs\":{\"pedal\":0}}},"
      "\"connections\":[[\"eng.out\",\"a0.in\",\"a1.in\"],[\"a0.out\",\"a1.out\",\"m.in\"],"
      "[\"m.out\",\"b0.in\",\"b1.in\",\"b2.in\"],[\"b0.out\",\"b1.out\",\"b2.out\",\"ld.in\"]]}";
  dg_graph_info info;
  ck_assert_int_eq(dg_graph_validate_string(NULL, json, "groups.json", NULL, NULL, &info), 0);
  ck_assert_int_eq(info.modes, 32);
  ck_assert_int_eq(info.modes_built, 11);
  ck_assert_double_eq(info.mode_combinations, 32.0);
  ck_assert_double_eq(info.modes_covered, 32.0);
  ck_assert_int_eq(info.mode_groups, 2);
  ck_assert_int_eq(info.partial_groups, 0);
}
END_TEST

/* Where structure cannot split: 13 clutches side by side between the same
 * two shafts are one group of 2^13 = 8192 combinations, more than the 4096
 * checked in full. The check goes as far from the start as fits: every
 * combination with at most 6 clutches locked, C(13,0) + ... + C(13,6) =
 * 1 + 13 + 78 + 286 + 715 + 1287 + 1716 = 4096 built, and says so. */
START_TEST(test_modes_group_too_large) {
  char json[4096];
  size_t len = (size_t)snprintf(json, sizeof json,
                                "{\"drivegraph\":1,\"blocks\":{\"eng\":{\"type\":\"torque_source\","
                                "\"inertia\":0.2},\"ld\":{\"type\":\"inertia\",\"inertia\":0.1}");
  for (int i = 0; i < 13; i++)
    len += (size_t)snprintf(json + len, sizeof json - len,
                            ",\"c%d\":{\"type\":\"clutch\",\"max_torque\":100,"
                            "\"inputs\":{\"pedal\":0}}",
                            i);
  len += (size_t)snprintf(json + len, sizeof json - len, "},\"connections\":[[\"eng.out\"");
  for (int i = 0; i < 13; i++)
    len += (size_t)snprintf(json + len, sizeof json - len, ",\"c%d.in\"", i);
  len += (size_t)snprintf(json + len, sizeof json - len, "],[\"ld.in\"");
  for (int i = 0; i < 13; i++)
    len += (size_t)snprintf(json + len, sizeof json - len, ",\"c%d.out\"", i);
  snprintf(json + len, sizeof json - len, "]]}");
  dg_graph_info info;
  ck_assert_int_eq(dg_graph_validate_string(NULL, json, "par13.json", NULL, NULL, &info), 0);
  ck_assert_int_eq(info.modes, 4096);
  ck_assert_int_eq(info.modes_built, 4096);
  ck_assert_double_eq(info.mode_combinations, 8192.0);
  ck_assert_double_eq(info.modes_covered, 4096.0);
  ck_assert_int_eq(info.mode_groups, 1);
  ck_assert_int_eq(info.partial_groups, 1);
  ck_assert_int_eq(info.largest_group, 13);
  ck_assert_double_eq(info.largest_group_modes, 8192.0);
  ck_assert_int_eq(info.mode_level, 6);
}
END_TEST

/* Block ids are compared at their full length in connections: ids of 300
 * bytes that differ only after byte 255 are two blocks, found as such. */
START_TEST(test_long_block_ids) {
  char a[301], b[301], json[2048];
  memset(a, 'x', 300);
  memcpy(b, a, 300);
  a[300] = b[300] = '\0';
  a[299] = 'a';
  b[299] = 'b';
  snprintf(json, sizeof json,
           "{\"drivegraph\":1,\"blocks\":{\"%s\":{\"type\":\"torque_source\",\"inertia\":1},"
           "\"%s\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"%s.out\",\"%s.in\"]]}",
           a, b, a, b);
  dg_graph *g = dg_test_graph(json);
  ck_assert_int_eq(dg_graph_connection_count(g), 1);
  const char *from, *to;
  dg_graph_connection(g, 0, &from, &to);
  ck_assert_int_eq((int)strlen(from), 304);
  ck_assert_int_eq(from[299], 'a');
  ck_assert_int_eq(to[299], 'b');
  dg_graph_free(g);
}
END_TEST

START_TEST(test_registry) {
  dg_registry *reg = dg_registry_new();
  ck_assert_int_ge(dg_registry_count(reg), 5);
  ck_assert_ptr_nonnull(dg_registry_find(reg, "gear"));
  ck_assert_ptr_null(dg_registry_find(reg, "nope"));
  dg_error err;
  ck_assert_int_eq(dg_registry_add(reg, dg_registry_find(reg, "gear"), &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "block type \"gear\" is already registered");
  static const dg_block_class old_abi = {.abi = 0, .type = "old"};
  ck_assert_int_eq(dg_registry_add(reg, &old_abi, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "block class old: built for block ABI 0, this library has 6");
  dg_registry_free(reg);
  dg_registry_free(NULL);
}
END_TEST

/* dg_init_idle: a block with states cannot do without torque_downstream
 * (it writes their rates); the simulation is refused, naming the block. */
static void stateful_torque(dg_block *self, dg_ctx *ctx) {
  (void)self;
  (void)ctx;
}

static int stateful_init(dg_block *self, dg_init *init) {
  (void)self;
  dg_init_idle(init, DG_HOOK_TORQUE | DG_HOOK_EVENTS);
  return 0;
}

START_TEST(test_idle_torque_with_states) {
  static const dg_port_def ports[] = {{.name = "in", .dir = DG_PORT_IN}, {0}};
  static const dg_block_class stateful = {.abi = DG_BLOCK_ABI,
                                          .type = "stateful",
                                          .ports = ports,
                                          .num_states = 1,
                                          .init = stateful_init,
                                          .torque_downstream = stateful_torque};
  dg_registry *reg = dg_test_registry();
  dg_error err;
  ck_assert_msg(dg_registry_add(reg, &stateful, &err) == DG_OK, "%s", err.text);
  const char *json = "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\","
                     "\"inertia\":1},\"x\":{\"type\":\"stateful\"}},"
                     "\"connections\":[[\"src.out\",\"x.in\"]]}";
  ck_assert_ptr_null(dg_graph_load_string(reg, json, "idle.json", &err));
  ck_assert_str_eq(err.file, "idle.json");
  ck_assert_str_eq(err.path, "/blocks/x");
  ck_assert_str_eq(err.text, "a block with states keeps torque_downstream (it writes their rates)");
  dg_registry_free(reg);
}
END_TEST

/* ---- what overriding a parameter can do to the every-mode check -------- */

static const struct {
  const char *key;
  unsigned effect;
  double base; /* the parsed base value, for DG_P_INERTIA */
} effects[] = {
    {"engine.inertia", DG_P_INERTIA, 0.2},
    {"engine.torque_map", DG_P_DYNAMICS, 0},
    {"engine.idle_rpm", DG_P_DYNAMICS, 0},
    {"converter.pump_inertia", DG_P_INERTIA, 0.05}, /* the default */
    {"converter.lockup.min_rpm", DG_P_DYNAMICS, 0}, /* the object is given */
    {"converter.lockup", 0, 0},                     /* presence sets the modes */
    {"gearbox.ratios", 0, 0},
    {"gearbox.reverse", 0, 0},
    {"gearbox.efficiency", DG_P_DYNAMICS, 0},
    {"gearbox.start_gear", 0, 0},
    {"gearbox.shift", 0, 0},
    {"gearbox.shift.mode", 0, 0},
    {"gearbox.shift.upshift_rpm", DG_P_DYNAMICS, 0},
    {"final.ratio", 0, 0},
    {"final.inertia", DG_P_INERTIA, 0},
    {"diff.kind", 0, 0},
    {"wheel_rl.radius", 0, 0},
    {"wheel_rl.tyre.model", 0, 0},
    {"wheel_rl.tyre.D", DG_P_DYNAMICS, 0},
    {"wheel_rl.inertia", DG_P_INERTIA, 1.3},
    {"body.mass", DG_P_INERTIA, 1500},
    {"body.road_load", DG_P_DYNAMICS, 0},    /* absent, but presence is dynamics too */
    {"body.road_load.f1", DG_P_DYNAMICS, 0},
    /* keys that name no parameter: loading reports them */
    {"engine.inertai", 0, 0},
    {"engine..inertia", 0, 0},
    {"engine.inertia.x", 0, 0},
    {"engine.", 0, 0},
    {"engine", 0, 0},
    {".inertia", 0, 0},
    {"engin.inertia", 0, 0},
    {"wheel_rl.tyre.D.x", 0, 0},
};

START_TEST(test_override_effect) {
  char path[1024];
  dg_test_path(path, sizeof path, "graphs/sedan_rwd_automatic.json");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  const dg_param_def *def = NULL;
  const double *value = NULL;
  unsigned effect = dgp_graph_override_effect(g, effects[_i].key, &def, &value);
  ck_assert_msg(effect == effects[_i].effect, "%s: %u", effects[_i].key, effect);
  if (effect == DG_P_INERTIA) {
    ck_assert_double_eq(*value, effects[_i].base);
    ck_assert_int_eq(def->kind, DG_PARAM_NUMBER);
    ck_assert(def->flags & DG_P_INERTIA);
  }
  dg_graph_free(g);
}
END_TEST

/* A field of an object the file leaves out makes the object present, and
 * the converter's lock-up decides its modes: that is structural. */
START_TEST(test_override_effect_absent_object) {
  dg_graph *g = dg_test_chain("\"inertia\": 0.2, \"torque\": 10", "torque_converter", "tc", "",
                              "\"inertia\": 1");
  const dg_param_def *def;
  const double *value;
  ck_assert_uint_eq(dgp_graph_override_effect(g, "tc.lockup.min_rpm", &def, &value), 0);
  ck_assert_uint_eq(dgp_graph_override_effect(g, "tc.capacity_factor", &def, &value),
                    DG_P_DYNAMICS);
  ck_assert_uint_eq(dgp_graph_override_effect(g, "src.torque", &def, &value), DG_P_DYNAMICS);
  ck_assert_uint_eq(dgp_graph_override_effect(NULL, "src.torque", &def, &value), 0);
  ck_assert_uint_eq(dgp_graph_override_effect(g, NULL, &def, &value), 0);
  dg_graph_free(g);
}
END_TEST

/* ---- shafts of several ports ------------------------------------------- */

/* Two sources on one shaft with a load: ["a.out", "b.out", "ld.in"] is one
 * node, so the three inertias turn together and the torques add:
 * ω̇ = (3 + 5)/(0.5 + 1.5 + 2) = 2 rad/s², exact under RK4. The power-flow
 * edges are the two out → in pairs. */
START_TEST(test_shaft_of_three) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"torque_source\",\"inertia\":0.5,\"torque\":3},"
      "\"b\":{\"type\":\"torque_source\",\"inertia\":1.5,\"torque\":5},"
      "\"ld\":{\"type\":\"load\",\"inertia\":2}},"
      "\"connections\":[[\"a.out\",\"b.out\",\"ld.in\"]]}");
  ck_assert_int_eq(dg_graph_shaft_count(g), 1);
  ck_assert_int_eq(dg_graph_shaft_port_count(g, 0), 3);
  ck_assert_str_eq(dg_graph_shaft_port(g, 0, 1), "b.out");
  ck_assert_ptr_null(dg_graph_shaft_port(g, 0, 3));
  ck_assert_int_eq(dg_graph_connection_count(g), 2);
  const char *from, *to;
  dg_graph_connection(g, 1, &from, &to);
  ck_assert_str_eq(from, "b.out");
  ck_assert_str_eq(to, "ld.in");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_test_step(sim, 100, 0.01);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 2.0, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), 2.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A motor in-line (its optional `in` port): source → motor → load is one
 * shaft; ω̇ = (4 + 100)/(1 + 0.2 + 3) at full throttle. */
START_TEST(test_source_in_line) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":1,\"torque\":4},"
      "\"m\":{\"type\":\"motor\",\"inertia\":0.2,\"max_torque\":100,\"max_rpm\":20000},"
      "\"ld\":{\"type\":\"load\",\"inertia\":3}},"
      "\"connections\":[[\"src.out\",\"m.in\"],[\"m.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_test_step(sim, 100, 0.001);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 104.0 / 4.2 * 0.1, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The nearest block of a type downstream: the pickup's engine drives the
 * main gearbox, which drives the transfer case; nothing is downstream of a
 * wheel's ground but the body. */
START_TEST(test_downstream) {
  dg_graph *g = dg_test_graph_file("graphs/pickup_4x4.json");
  int engine = dg_test_block_index(g, "engine"), gearbox = dg_test_block_index(g, "gearbox");
  ck_assert_int_eq(dg_graph_downstream(g, engine, "gearbox"), gearbox);
  ck_assert_int_eq(dg_graph_downstream(g, gearbox, "gearbox"), dg_test_block_index(g, "transfer"));
  ck_assert_int_eq(dg_graph_downstream(g, engine, "vehicle"), dg_test_block_index(g, "body"));
  ck_assert_int_eq(dg_graph_downstream(g, engine, "planetary"), -1);
  ck_assert_int_eq(dg_graph_downstream(g, -1, "gearbox"), -1);
  dg_graph_free(g);
}
END_TEST

static const struct {
  const char *conns, *path, *text;
} bad_shafts[] = {
    {"[[\"a.out\",\"b.out\"]]", "/connections/0",
     "connects two out ports (\"a.out\" and \"b.out\"); a connection joins an out port to an in "
     "port (a machine on another source's shaft, as a generator on an engine, joins it through "
     "its in port: [\"engine.out\", \"gen.in\"])"},
    {"[[\"g.in\",\"h.in\",\"ld.in\"],[\"a.out\",\"b.out\",\"g.out\",\"h.out\"]]",
     "/connections/0",
     "joins 3 in ports and nothing else; a shaft joins out ports (its source side) to in ports"},
    {"[[\"a.out\",\"ld.in\",\"a.out\"]]", "/connections/0",
     "connects block \"a\" to itself"},
    {"[[\"a.out\"]]", "/connections/0",
     "expected the ports of one shaft, [\"block.out_port\", \"block.in_port\", ...] (two or "
     "more), got one port"},
    {"[[\"a.out\",\"ld.in\"],[\"b.out\",\"ld.in\",\"g.in\"]]", "/connections/1/1",
     "port \"ld.in\" is already connected by /connections/0"},
};

START_TEST(test_bad_shafts) {
  dg_test_graph_error_at(
      bad_shafts[_i].path, bad_shafts[_i].text,
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"torque_source\",\"inertia\":0.5},"
      "\"b\":{\"type\":\"torque_source\",\"inertia\":0.5},"
      "\"g\":{\"type\":\"gear\",\"ratio\":2},\"h\":{\"type\":\"gear\",\"ratio\":3},"
      "\"ld\":{\"type\":\"load\",\"inertia\":2}},\"connections\":%s}",
      bad_shafts[_i].conns);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("graph");
  TCase *tc = tcase_create("errors");
  tcase_add_test(tc, test_invalid_corpus);
  tcase_add_test(tc, test_error_codes_and_fields);
  suite_add_tcase(s, tc);
  tc = tcase_create("load");
  tcase_add_test(tc, test_connection_order_and_accessors);
  tcase_add_test(tc, test_example_graphs);
  tcase_add_test(tc, test_long_block_ids);
  tcase_add_test(tc, test_modes_enumerated);
  tcase_add_test(tc, test_modes_partial_reported);
  tcase_add_test(tc, test_modes_groups_multiply);
  tcase_add_test(tc, test_modes_group_too_large);
  tcase_add_test(tc, test_validate_load_file);
  tcase_add_test(tc, test_groups_match_every_combination);
  tcase_add_test(tc, test_registry);
  tcase_add_test(tc, test_idle_torque_with_states);
  tcase_add_test(tc, test_shaft_of_three);
  tcase_add_test(tc, test_source_in_line);
  tcase_add_test(tc, test_downstream);
  tcase_add_loop_test(tc, test_bad_shafts, 0, (int)(sizeof bad_shafts / sizeof bad_shafts[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("overrides");
  tcase_add_loop_test(tc, test_override_effect, 0, (int)(sizeof effects / sizeof effects[0]));
  tcase_add_test(tc, test_override_effect_absent_object);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
