/* What the Arrow import (lib/chunk/arrow_*.c) keeps in a chunk and needs of
 * it beyond the public typed calls: the per-column QuestDB types asked for
 * with qsf_chunk_arrow_type (kept across qsf_chunk_clear, freed with the
 * chunk), the buffers of converted columns (freed when the chunk is cleared),
 * and a snapshot of the chunk's columns so that a record batch adds all of its
 * columns or none. */
#ifndef QSF_CHUNK_ARROW_H
#define QSF_CHUNK_ARROW_H

#include "qsf.h"

#include <stddef.h>

typedef struct qsf_arrow_state qsf_arrow_state;

/* The chunk's slot for the Arrow state (NULL until first needed).
 * qsf_chunk_clear calls qsf_arrow_state_clear on it (the converted buffers
 * go, the types stay), qsf_chunk_free qsf_arrow_state_free. */
qsf_arrow_state **qsf_chunk_arrow_state(qsf_chunk *c);
void qsf_arrow_state_clear(qsf_arrow_state *st);
void qsf_arrow_state_free(qsf_arrow_state *st);

/* `bytes` of memory that lives until the chunk is cleared or freed (NULL: out
 * of memory). */
void *qsf_arrow_scratch(qsf_chunk *c, size_t bytes);

/* The chunk's columns, row count and designated timestamp as they are now
 * (NULL: out of memory). Restore forgets every column added and the
 * designated timestamp set since, and frees the mark; drop only frees it. */
typedef struct qsf_chunk_mark qsf_chunk_mark;
qsf_chunk_mark *qsf_chunk_mark_take(const qsf_chunk *c);
void qsf_chunk_mark_restore(qsf_chunk *c, qsf_chunk_mark *m);
void qsf_chunk_mark_drop(qsf_chunk_mark *m);

#endif
