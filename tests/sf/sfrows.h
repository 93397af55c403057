/* Slots holding real rows for the tool's tests: the frames are what a sender
 * stores (the library's own batch and encoder, delta symbols written ahead
 * into .symbol-dict), written into one segment with a manifest, so that
 * `qsf slot dump --rows` decodes them. Deterministic: the same call writes
 * the same bytes. */
#ifndef QSF_SFROWS_H
#define QSF_SFROWS_H

#include <stdint.h>

/* Writes <slot>/sf-0000000000000001.sfa (size bytes, baseSeq 0, createdMicros
 * `created_us`), sf-manifest.bin (0, 0) and .symbol-dict: `flushes` flushes of
 * `rows` rows each into table `table` (k LONG = row number from 0, sym SYMBOL
 * of 3 values "s0".."s2", px DOUBLE = k * 1.5, designated timestamp
 * 1700000000000000 + k µs), one frame per flush. Returns the FSN of the last
 * frame. */
int64_t sr_rows_slot(const char *slot, uint64_t size, int64_t created_us, const char *table,
                     int flushes, int rows);

#endif
