/* The sender's symbol table (docs/PROTOCOL.md §4).
 *
 * Maps each distinct SYMBOL value to a dense connection-global id, assigned from 0
 * in first-use order; ids live for the life of the slot. Three watermarks, all
 * counts of ids (ids [0, n)):
 *
 *   0 ........ published ........ persisted ........ size ........ cap
 *   |  carried by an emitted frame |  written to      |  interned,  |
 *   |  (server learns them)        |  .symbol-dict    |  not yet in |
 *                                     (write-ahead)      any frame
 *
 * - size: ids assigned so far.
 * - persisted: ids handed to the write-ahead callback (.symbol-dict). The encoder
 *   calls the callback only for ids >= persisted, so no entry is written twice.
 * - published: ids carried by a frame that was emitted (appended to the ring). The
 *   next frame's delta section starts here, so ids whose frame failed to publish
 *   are carried again. published <= persisted unless the caller runs without a
 *   side file (self-sufficient mode), where persisted is unused.
 * The cap (2,000,000 by default, the server limit) bounds size: a new distinct
 * symbol beyond it fails with QSF_E_DICT_FULL while known symbols keep working.
 *
 * Threads: one thread at a time (the producer). */
#ifndef QSF_QWP_SYMTAB_H
#define QSF_QWP_SYMTAB_H

#include "qsf.h"

#include <stddef.h>
#include <stdint.h>

typedef struct qsf_symtab qsf_symtab;

/* Creates an empty table with cap QSF_QWP_MAX_SYMBOLS. Errors: QSF_E_NOMEM. */
int qsf_symtab_new(qsf_symtab **out, qsf_errinfo *err);
void qsf_symtab_free(qsf_symtab *t);

/* Id of s[0..len), assigning the next id if it is new. *is_new (may be NULL) tells
 * which. The caller validates UTF-8. Errors: QSF_E_DICT_FULL (new symbol and size ==
 * cap; message gives the cap), QSF_E_NOMEM. The table is unchanged on error. */
int qsf_symtab_intern(qsf_symtab *t, const char *s, size_t len, uint32_t *id, int *is_new,
                      qsf_errinfo *err);

/* Id of s without assigning one: 1 and *id when known, 0 otherwise. */
int qsf_symtab_find(const qsf_symtab *t, const char *s, size_t len, uint32_t *id);

/* Entry `id` (< size): its bytes and length. The pointer is valid until the next
 * intern/seed (storage may move). Returns QSF_E_INVAL for id >= size. */
int qsf_symtab_get(const qsf_symtab *t, uint32_t id, const char **s, size_t *len);

uint32_t qsf_symtab_size(const qsf_symtab *t);
uint32_t qsf_symtab_cap(const qsf_symtab *t);

/* Appends a recovered entry (id = size) as read from .symbol-dict / ring frames
 * during recovery. Duplicate strings are allowed (a dictionary may redefine), in
 * which case lookups keep returning the first id. Errors: QSF_E_DICT_FULL,
 * QSF_E_NOMEM. The caller then sets the watermarks (normally persisted = published =
 * size after recovery: the frames in the ring and the side file carry them). */
int qsf_symtab_seed(qsf_symtab *t, const char *s, size_t len, qsf_errinfo *err);

uint32_t qsf_symtab_published(const qsf_symtab *t);
uint32_t qsf_symtab_persisted(const qsf_symtab *t);
/* Setters clamp to size. The encoder moves them; the sender sets them after
 * recovery; a reconnect does not touch them (catch-up re-registers [0, published)). */
void qsf_symtab_set_published(qsf_symtab *t, uint32_t n);
void qsf_symtab_set_persisted(qsf_symtab *t, uint32_t n);

/* Drops the newest ids so that `size` remain; never below persisted or published
 * (clamped). Used to undo symbols first interned by a cancelled row. */
void qsf_symtab_truncate(qsf_symtab *t, uint32_t size);

/* Lowers the cap (tests; 1 <= cap <= QSF_QWP_MAX_SYMBOLS). */
void qsf_symtab_set_cap(qsf_symtab *t, uint32_t cap);

/* Entry accessor with the signature of qsf_qwp_entry_fn (encoder.h), `user` being
 * the qsf_symtab: lets catch-up frames be built straight from the table. Only on
 * the thread that interns (an intern may move the strings); another thread builds
 * catch-up frames from its own copy (e.g. the .symbol-dict entries). */
int qsf_symtab_entry_cb(void *user, uint32_t id, const char **s, size_t *len);

#endif
