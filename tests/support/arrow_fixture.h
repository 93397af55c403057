/* Arrow C Data Interface structs built by hand for the tests: one array with
 * its schema, children and dictionary linked by pointer, owned by the test
 * (release callbacks only mark the struct released). */
#ifndef QSF_TEST_ARROW_FIXTURE_H
#define QSF_TEST_ARROW_FIXTURE_H

#include "qsf.h"

#include <stdint.h>
#include <string.h>

#define AF_MAX_CHILDREN 40

typedef struct af_col {
    struct ArrowSchema s;
    struct ArrowArray a;
    const void *bufs[6];
    struct ArrowSchema *sch_kids[AF_MAX_CHILDREN];
    struct ArrowArray *arr_kids[AF_MAX_CHILDREN];
} af_col;

static inline void af_release_schema(struct ArrowSchema *s) {
    s->release = NULL;
}
static inline void af_release_array(struct ArrowArray *a) {
    a->release = NULL;
}

/* An array of `len` rows at `off` with `nulls` null rows and buffers b0..b2
 * (n_buffers of them). */
static inline void af_init(af_col *c, const char *format, const char *name, int64_t len,
                           int64_t off, int64_t nulls, int64_t n_buffers, const void *b0,
                           const void *b1, const void *b2) {
    memset(c, 0, sizeof *c);
    c->bufs[0] = b0;
    c->bufs[1] = b1;
    c->bufs[2] = b2;
    c->s.format = format;
    c->s.name = name;
    c->s.flags = ARROW_FLAG_NULLABLE;
    c->s.release = af_release_schema;
    c->a.length = len;
    c->a.offset = off;
    c->a.null_count = nulls;
    c->a.n_buffers = n_buffers;
    c->a.buffers = c->bufs;
    c->a.release = af_release_array;
}

/* Makes `kid` child number n_children of `c`. */
static inline void af_child(af_col *c, af_col *kid) {
    int64_t i = c->s.n_children;
    c->sch_kids[i] = &kid->s;
    c->arr_kids[i] = &kid->a;
    c->s.n_children = c->a.n_children = i + 1;
    c->s.children = c->sch_kids;
    c->a.children = c->arr_kids;
}

/* Makes `dict` the dictionary of `c`. */
static inline void af_dict(af_col *c, af_col *dict) {
    c->s.dictionary = &dict->s;
    c->a.dictionary = &dict->a;
}

/* Field metadata of one key/value pair into buf (room for 8 + both + 8). */
static inline const char *af_meta(char *buf, const char *key, const char *val) {
    int32_t n = 1, kl = (int32_t) strlen(key), vl = (int32_t) strlen(val);
    memcpy(buf, &n, 4);
    memcpy(buf + 4, &kl, 4);
    memcpy(buf + 8, key, (size_t) kl);
    memcpy(buf + 8 + kl, &vl, 4);
    memcpy(buf + 12 + kl, val, (size_t) vl);
    return buf;
}

#endif
