/* The column chunk (include/qsf.h, "Columns in: chunks"), shared by chunk.c
 * (the object and the typed column calls, which validate everything), the
 * encoder (chunk_enc.c, which trusts what they accepted) and the publishing
 * glue (chunk_flush.c).
 *
 * A chunk keeps pointers to the caller's buffers, never their bytes: one
 * qsf_chunk_col per column says how to read row i of it:
 *
 *   fixed-width   values[off + i]                       (src_width bytes each)
 *   BOOLEAN bits  bit off + i of values
 *   VARCHAR/...   data[offs[off + i] .. offs[off + i + 1])  (32- or 64-bit offs)
 *   SYMBOL dict   dictionary entry codes[off + i]
 *   f64 list      values[loffs[off + i] .. loffs[off + i + 1])
 *   f64 tensor    values[(off + i) * elems .. + elems)
 *   validity      bit off + i set: row i has a value (NULL: every row has)
 *
 * Checks were all made when the column was added, so the encoder reads only
 * what the caller declared and never fails on a value. */
#ifndef QSF_CHUNK_INT_H
#define QSF_CHUNK_INT_H

#include "qsf.h"
#include "qwp/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a column's buffers are read and turned into wire values. */
enum qsf_chunk_src {
    CSRC_COPY = 1,  /* fixed-width, the wire bytes as they are (src_width each) */
    CSRC_WIDEN_U8,  /* u8 -> i16 */
    CSRC_WIDEN_U16, /* u16 -> i32 */
    CSRC_WIDEN_U32, /* u32 -> i64 */
    CSRC_SCALE_I64, /* i64 * mult (timestamps in s/ms, to µs) */
    CSRC_DAYS,      /* i32 days -> i64 millis */
    CSRC_UUID,      /* 16 bytes most significant first -> wire (least first) */
    CSRC_GEOHASH,   /* u64, the low geo_bits bits, (geo_bits + 7) / 8 bytes */
    CSRC_BOOL_BITS, /* an Arrow boolean bitmap */
    CSRC_BOOL_U8,   /* one byte per value, non-zero = true */
    CSRC_VAR32,     /* VARCHAR / BINARY with 32-bit offsets */
    CSRC_VAR64,     /* ... 64-bit offsets */
    CSRC_SYM32,     /* SYMBOL from strings, 32-bit offsets */
    CSRC_SYM64,     /* ... 64-bit offsets */
    CSRC_SYMDICT,   /* SYMBOL from codes + a dictionary */
    CSRC_LIST,      /* DOUBLE_ARRAY, rank 1, List<Float64> offsets */
    CSRC_TENSOR,    /* DOUBLE_ARRAY of one fixed shape */
};

typedef struct qsf_chunk_col {
    char name[QSF_QWP_MAX_NAME_LEN + 1];
    uint8_t name_len;
    uint8_t type;       /* QWP type code on the wire */
    uint8_t src;        /* enum qsf_chunk_src */
    uint8_t src_width;  /* bytes of one source value (fixed-width); code bytes (dict) */
    uint8_t scale;      /* decimals */
    uint8_t geo_bits;   /* geohash */
    uint8_t rank;       /* tensor */
    int64_t mult;       /* CSRC_SCALE_I64 */
    const void *values; /* values, string data, codes or array elements */
    const void *offs;   /* var-width / list offsets; dictionary offsets */
    const char *dict;   /* dictionary bytes */
    size_t dict_len;    /* dictionary entries */
    const uint8_t *validity;
    size_t off;   /* element (bit) offset of row 0 */
    size_t nulls; /* NULL rows */
    size_t elems; /* tensor: elements per row */
    int32_t shape[QSF_QWP_MAX_ARRAY_RANK];
    /* encode scratch (chunk_enc.c) */
    size_t ids_at;    /* SYMBOL: where its rows' ids start in the scratch ids */
    size_t dict_at;   /* CSRC_SYMDICT: where its codes' ids start in the scratch dict_ids */
    size_t enc_nulls; /* NULL rows of the frame being written */
} qsf_chunk_col;

/* What an encode needs besides the columns (chunk_enc.c), kept for reuse. */
typedef struct qsf_chunk_scratch {
    uint32_t *ids; /* symbol ids, `rows` per SYMBOL column (NULL rows: unused) */
    size_t ids_cap;
    uint32_t *dict_ids; /* a dictionary column's code -> id + 1 (0: not interned yet) */
    size_t dict_cap;
    uint32_t *sym_end; /* [r]: 1 + the highest id rows [0, r) reference (0: none) */
    size_t end_cap;
    uint64_t *cum; /* [i]: delta-section bytes of ids [base, base + i) */
    size_t cum_cap;
    uint64_t *ts; /* one timestamp column's values of a frame, packed */
    size_t ts_cap;
    uint8_t *frame; /* a frame the ring lent no room for */
    size_t frame_cap;
    const char **strs; /* write-ahead arguments */
    size_t strs_cap;
    size_t *lens;
    size_t lens_cap;
    size_t *cuts; /* the planned frames: rows [cuts[i], cuts[i + 1]) */
    size_t cuts_cap;
    struct qsf_chunk_memo *memo; /* recent strings of plain-string SYMBOL columns -> id */
    size_t memo_cap;
    size_t memo_slots; /* slots in use this encode: a power of two */
} qsf_chunk_scratch;

struct qsf_chunk {
    char table[QSF_QWP_MAX_NAME_LEN + 1];
    uint8_t table_len;
    qsf_chunk_col *cols;
    uint32_t ncols, cols_cap;
    size_t rows;
    bool counted; /* rows fixed by a column (or the designated timestamp) */
    char counter[QSF_QWP_MAX_NAME_LEN + 1]; /* the name of what fixed rows */
    /* the designated timestamp: none (server time) or a column of int64 */
    bool has_ts;
    const int64_t *ts;
    size_t ts_off;
    int64_t ts_mult; /* to µs (or 1 for nanos) */
    bool ts_nanos;
    qsf_chunk_scratch scratch;
    struct qsf_arrow_state *arrow; /* the Arrow import's types and buffers (chunk_arrow.h) */
};

/* Whether row i of the column has a value. */
static inline bool qsf_chunk_valid(const qsf_chunk_col *c, size_t i) {
    size_t bit = c->off + i;
    return !c->validity || (c->validity[bit >> 3] >> (bit & 7)) & 1;
}

/* NULL rows among bits [off, off + rows) of an Arrow validity bitmap. */
size_t qsf_chunk_count_nulls(const uint8_t *validity, size_t off, size_t rows);

/* The dictionary code of row i of a CSRC_SYMDICT column. */
int64_t qsf_chunk_code(const qsf_chunk_col *k, size_t i);

/* Start and end (exclusive) of the bytes of element j in a 32- or 64-bit
 * Arrow offsets buffer. */
static inline void qsf_chunk_span(const void *offs, bool wide, size_t j, uint64_t *b, uint64_t *e) {
    if (wide) {
        const int64_t *o = offs;
        *b = (uint64_t) o[j];
        *e = (uint64_t) o[j + 1];
    } else {
        const int32_t *o = offs;
        *b = (uint64_t) o[j];
        *e = (uint64_t) o[j + 1];
    }
}

#endif
