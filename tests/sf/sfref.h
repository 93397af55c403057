/* The documented results of the reference slot files, shared by the test of
 * the Java-written fixtures (tests/interop, ../shared/interop/README.md) and
 * the test of qsf's own golden files (tests/unit/test_golden.c,
 * tests/golden/README.md): both sets hold the same bytes for the same inputs,
 * so they must read alike. Each check places the bytes in st_slot (sftest.h)
 * and fails the calling cmocka test on any difference. */
#ifndef QSF_SFREF_H
#define QSF_SFREF_H

#include "sf/symdict.h"

#include <stddef.h>
#include <stdint.h>

/* createdMicros of the two-frame segment. */
#define SR_CREATED_MICROS 1234567890123

/* As sf-initial.sfa: baseSeq 42, frames `one` (offset 24) and `two-two` (35),
 * zeros from 50; recovered as 2 frames, FSNs 42..43, append offset 50, no torn
 * bytes, acked FSN 41. */
void sr_expect_two_frame_segment(const uint8_t *img, size_t n);

/* The same with frame 1 damaged: 1 frame (FSN 42), append offset 35, 29 torn
 * bytes, and recovery leaves zeros from offset 35 on. */
void sr_expect_two_frame_torn(const uint8_t *img, size_t n);

/* As .symbol-dict: ids 0..2 = one, two, three in 2 chunks, nothing torn. */
void sr_expect_two_chunk_dict(const uint8_t *img, size_t n);

/* The same with chunk 1 damaged: only id 0 = one (1 chunk, valid end 18), 16
 * torn bytes. */
void sr_expect_two_chunk_torn(const uint8_t *img, size_t n);

/* qsf's writers for the same inputs, into st_slot; each returns the file's
 * bytes (malloc'd). The segment goes through the runtime's writer
 * (qsf_seg_create_file + qsf_seg_append) with the clock reading
 * SR_CREATED_MICROS; the dictionary through qsf_symdict_create + two appends. */
uint8_t *sr_write_two_frame_segment(size_t *n);
uint8_t *sr_write_two_chunk_dict(size_t *n);

/* Fails unless got[0..n) and want[0..wn) are the same bytes; frees both. */
void sr_expect_same(uint8_t *got, size_t n, uint8_t *want, size_t wn);

/* Fails unless the symbol dictionary holds exactly want[0..n). */
void sr_expect_ids(const qsf_symdict *d, int n, const char *const *want);

#endif
