/* Fuzz target: the input becomes a segment file in a fresh slot (the first byte
 * chooses whether a manifest and a .symbol-dict sit next to it); the slot is
 * recovered (salvage, flushes given up, the cut, all of it). No crash, and
 * whatever recovery returns must be self-consistent. */
#include "slot_fixture.h"

#include "sf/sidefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    char slot[320];
    const char *sfdir = qsf_fz_fresh_slot(slot);
    uint8_t mode = data[0];
    qsf_fz_write_file(slot, (mode & 4) ? "sf-initial.sfa" : "sf-0000000000000001.sfa", data + 1,
                      size - 1);
    if (mode & 1) { /* a manifest naming the segment's own baseSeq (when readable) */
        int64_t b = size >= 17 ? (int64_t) (data[9] | (data[10] << 8)) : 0;
        uint8_t img[8192] = {0};
        qsf_sfm_encode(img + 4096, 1, b, b);
        qsf_fz_write_file(slot, "sf-manifest.bin", img, sizeof img);
    }
    if (mode & 2) {
        static const uint8_t dict[] = {0x53, 0x59, 0x44, 0x31, 1,   0,    0,    0,    1,
                                       4,    3,    'o',  'n',  'e', 0x89, 0x31, 0x8D, 0x70};
        qsf_fz_write_file(slot, ".symbol-dict", dict, sizeof dict);
    }
    qsf_fz_open_and_check(sfdir);
    return 0;
}
