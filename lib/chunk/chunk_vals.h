/* A chunk's table block (docs/PROTOCOL.md §5): column values written from the
 * caller's buffers, and the bound of their bytes the planner sizes frames
 * with. */
#ifndef QSF_CHUNK_VALS_H
#define QSF_CHUNK_VALS_H

#include "chunk/chunk_int.h"

/* Upper bound of column k's bytes after its definition (null section and
 * values) for rows [r0, r0 + n); SYMBOL ids count id_bytes each. */
uint64_t qsf_chunk_col_bound(const qsf_chunk_col *k, size_t r0, size_t n, uint8_t id_bytes);

/* Writes the table block of rows [r0, r0 + n) at p and returns its end: a
 * column with no value in those rows is left out, as the row path does;
 * timestamps Gorilla-encoded with `gorilla` (when it fits). The symbol ids
 * are the scratch ids of the encode. */
uint8_t *qsf_chunk_put_block(qsf_chunk *c, uint8_t *p, size_t r0, size_t n, bool gorilla);

#endif
