/* Stored frames decoded into tables and rows (lib/qwpdec, the decoder a server
 * uses), their symbols resolved through the slot's dictionary: the entries a
 * walk gives (sfops/dump.h: .symbol-dict and what the frames' delta sections add)
 * and each frame's own delta section. */
#ifndef QSF_TOOL_ROWS_H
#define QSF_TOOL_ROWS_H

#include "qwpdec/decoder.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rows_dec rows_dec;

rows_dec *rows_new(void);
void rows_free(rows_dec *d);

/* Entry id of the slot's dictionary (ids in order from 0). 0 or -1 (memory). */
int rows_add_symbol(rows_dec *d, uint32_t id, const char *s, uint32_t len);

/* Decodes one stored frame. Returns the message (valid until the next call)
 * or NULL with the reason in why: not a QWP message, or what the decoder
 * found (the status a server would answer, and where). */
const qsf_qwp_msg *rows_decode(rows_dec *d, const uint8_t *p, uint32_t len, char *why, size_t cap);

/* A value as text ("null" when null): integers in decimal, FLOAT/DOUBLE %.17g,
 * TIMESTAMP, TIMESTAMP_NANOS and DATE as UTC times, SYMBOL and VARCHAR as
 * they are, IPv4 dotted, UUID 8-4-4-4-12, arrays as nested lists, the rest
 * as hex of their bytes. *numeric: a JSON number may carry it. */
void rows_value(const qsf_qwp_dcol *c, uint32_t row, char *out, size_t cap, bool *is_null,
                bool *numeric);

/* A column's name for people: the designated timestamp (empty name) is
 * "timestamp". */
const char *rows_col_name(const qsf_qwp_dcol *c, uint32_t *len);

#endif
