/* Arrow C Data Interface import (include/qsf.h, "Columns in: Apache Arrow C
 * Data Interface"; docs/ARROW.md): the pieces shared by the format parser, the
 * structure checks, the column mapping and the record-batch and stream calls.
 * The import sits on the public typed qsf_chunk_* calls and needs nothing of
 * the chunk's own layout except the per-chunk type overrides and the column
 * rollback of lib/chunk/chunk_arrow.h. */
#ifndef QSF_CHUNK_ARROW_INT_H
#define QSF_CHUNK_ARROW_INT_H

#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How deep an Arrow type may nest (a list of fixed-size lists of ...): bounds
 * the recursion on hostile schemas; a DOUBLE array has at most 32 dimensions. */
#define QSF_ARROW_MAX_DEPTH 33

/* What a format string names (the Arrow C Data Interface's format strings). */
typedef enum {
    QSF_AK_NULL,      /* n */
    QSF_AK_BOOL,      /* b */
    QSF_AK_I8,        /* c */
    QSF_AK_U8,        /* C */
    QSF_AK_I16,       /* s */
    QSF_AK_U16,       /* S */
    QSF_AK_I32,       /* i */
    QSF_AK_U32,       /* I */
    QSF_AK_I64,       /* l */
    QSF_AK_U64,       /* L */
    QSF_AK_F16,       /* e */
    QSF_AK_F32,       /* f */
    QSF_AK_F64,       /* g */
    QSF_AK_BINARY,    /* z */
    QSF_AK_LBINARY,   /* Z */
    QSF_AK_BINVIEW,   /* vz */
    QSF_AK_UTF8,      /* u */
    QSF_AK_LUTF8,     /* U */
    QSF_AK_UTF8VIEW,  /* vu */
    QSF_AK_DECIMAL,   /* d:P,S[,B] */
    QSF_AK_FIXBIN,    /* w:N */
    QSF_AK_DATE32,    /* tdD */
    QSF_AK_DATE64,    /* tdm */
    QSF_AK_TIME,      /* tts ttm ttu ttn */
    QSF_AK_TIMESTAMP, /* tss: tsm: tsu: tsn: (then a time zone, maybe empty) */
    QSF_AK_DURATION,  /* tDs tDm tDu tDn */
    QSF_AK_INTERVAL,  /* tiM tiD tin */
    QSF_AK_LIST,      /* +l */
    QSF_AK_LLIST,     /* +L */
    QSF_AK_LISTVIEW,  /* +vl +vL */
    QSF_AK_FIXLIST,   /* +w:N */
    QSF_AK_STRUCT,    /* +s */
    QSF_AK_MAP,       /* +m */
    QSF_AK_UNION,     /* +ud:... +us:... */
    QSF_AK_RUNEND,    /* +r */
} qsf_arrow_kind;

typedef struct {
    qsf_arrow_kind kind;
    int unit;       /* TIME/TIMESTAMP/DURATION: QSF_UNIT_* */
    int32_t width;  /* FIXBIN: bytes per value; FIXLIST: values per row */
    int precision;  /* DECIMAL */
    int scale;      /* DECIMAL */
    int bits;       /* DECIMAL: 32, 64, 128 or 256 */
    const char *tz; /* TIMESTAMP: the time zone (may be empty) */
} qsf_arrow_fmt;

/* Parses a NUL-terminated format string. QSF_E_UNSUPPORTED (with *why) for a
 * string the Arrow C Data Interface does not define. */
int qsf_arrow_fmt_parse(const char *format, qsf_arrow_fmt *out, const char **why);

/* The value of `key` in Arrow field metadata (int32 count, then per entry an
 * int32 key length, the key, an int32 value length, the value; native order).
 * False when absent or when the metadata is malformed (a negative count or
 * length, or more than `limit` bytes in all). */
bool qsf_arrow_meta_get(const char *metadata, const char *key, const char **val, int32_t *val_len);

/* A column's name made printable for an error message (qsf_text_escape), cut to
 * the buffer. */
#define QSF_ARROW_NAME_CAP 128
void qsf_arrow_name_print(char *dst, const char *name, size_t len);

/* One column in an error message: its printable name and its format. */
typedef struct {
    char name[QSF_ARROW_NAME_CAP];
    char format[48];
} qsf_arrow_who;
void qsf_arrow_who_set(qsf_arrow_who *w, const char *name, size_t name_len, const char *format);

/* An array seen through its parent: rows [off, off + len) of the array's own
 * buffers (off includes the array's own offset and a record batch's). */
typedef struct {
    const struct ArrowArray *a;
    int64_t off;
    int64_t len;
} qsf_arrow_view;

/* Checks what every array must satisfy before its buffers are read: length,
 * offset and null_count in range, `n_buffers` buffers (NULL where allowed),
 * `n_children` children, the null count equal to the validity bitmap's zeros.
 * QSF_E_VALUE naming `who`. */
int qsf_arrow_check_array(const struct ArrowArray *a, int64_t n_buffers, int64_t n_children,
                          bool has_validity, const qsf_arrow_who *who, qsf_errinfo *err);

/* The number of clear bits of bitmap bits[off .. off + len). */
int64_t qsf_arrow_count_zeros(const uint8_t *bits, int64_t off, int64_t len);

/* Checks that a 32- or 64-bit offsets buffer is valid for rows [off, off+len]:
 * no negative entry, never decreasing. *last receives the last entry. */
int qsf_arrow_check_offsets(const void *offsets, int width, int64_t off, int64_t len, int64_t *last,
                            const qsf_arrow_who *who, qsf_errinfo *err);

/* The override a column asks for: the chunk's table first, then the field's
 * metadata (questdb.type, ARROW:extension:name arrow.uuid). QSF_TYPE_*. */
int qsf_arrow_wanted_type(qsf_chunk *c, const char *name, size_t name_len,
                          const struct ArrowSchema *schema);

/* One column being added: where it goes and what it is. */
typedef struct {
    qsf_chunk *c;
    const char *name;
    size_t name_len;
    const struct ArrowSchema *schema;
    qsf_arrow_fmt fmt;
    qsf_arrow_view v;
    int want; /* QSF_TYPE_* */
    qsf_arrow_who who;
} qsf_arrow_col;

/* Buffer i of the view's array, or a zeroed stand-in when it is NULL (then
 * the array is empty: qsf_arrow_check_array refused a NULL data buffer
 * otherwise). */
extern const int64_t qsf_arrow_empty_buf[4];
static inline const void *qsf_arrow_buf(const qsf_arrow_col *x, int i) {
    const void *b = x->v.a->buffers[i];
    return b != NULL ? b : qsf_arrow_empty_buf;
}

/* A typed qsf_chunk_* call on the view's rows (its last four arguments are the
 * validity, offset, rows and err of every such call), its error prefixed with
 * the Arrow format. */
#define QSF_ARROW_CALL(fn, ...)                                                                    \
    qsf_arrow_typed(x,                                                                             \
                    fn(x->c, x->name, x->name_len, __VA_ARGS__, x->v.a->buffers[0],                \
                       (size_t) x->v.off, (size_t) x->v.len, err),                                 \
                    err)

/* QSF_E_UNSUPPORTED / QSF_E_VALUE naming the column and its format. */
int qsf_arrow_refuse(const qsf_arrow_col *x, qsf_errinfo *err, const char *why);
int qsf_arrow_invalid(const qsf_arrow_col *x, qsf_errinfo *err, const char *fmt, int64_t a,
                      int64_t b);
/* rc of a typed qsf_chunk_* call, its message prefixed with the Arrow format. */
int qsf_arrow_typed(const qsf_arrow_col *x, int rc, qsf_errinfo *err);

/* The view's validity from bit 0 of a bitmap the chunk keeps until it is
 * cleared (NULL stays NULL); false: out of memory. */
bool qsf_arrow_copy_validity(const qsf_arrow_col *x, const uint8_t **out);

/* Dictionary arrays (arrow_dict.c), DOUBLE arrays (arrow_list.c), and the
 * formats taken by conversion (arrow_convert.c: utf8_view, binary_view,
 * float16, decimal32). */
int qsf_arrow_add_dict(const qsf_arrow_col *x, qsf_errinfo *err);
int qsf_arrow_add_array(const qsf_arrow_col *x, qsf_errinfo *err);
int qsf_arrow_add_converted(const qsf_arrow_col *x, qsf_errinfo *err);

/* Adds the view `v` of an array with schema `schema` as column `name`. */
int qsf_arrow_add_column(qsf_chunk *c, const char *name, size_t name_len,
                         const struct ArrowSchema *schema, qsf_arrow_view v, qsf_errinfo *err);

#endif
