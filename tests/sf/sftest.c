/* Slot file builders for the sf tests (see sftest.h). */
#include "sftest.h"

#include "testutil.h"

#include "bytes.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sidefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char st_root[512], st_sfdir[600], st_slot[700];

int st_setup(void **state) {
    (void) state;
    tu_mkdtemp(st_root, sizeof st_root);
    snprintf(st_sfdir, sizeof st_sfdir, "%s/sf", st_root);
    snprintf(st_slot, sizeof st_slot, "%s/default", st_sfdir);
    mkdir(st_sfdir, 0700);
    mkdir(st_slot, 0700);
    return 0;
}

int st_teardown(void **state) {
    (void) state;
    qsf_os_reset();
#ifdef QSF_FAULT_INJECTION
    qsf_fault_disarm_all();
#endif
    tu_rmtree(st_root);
    return 0;
}

const char *st_path(const char *dir, const char *name) {
    static char bufs[8][1200];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

uint64_t st_segment(const char *dir, const char *name, uint64_t size, uint8_t flags, int64_t base,
                    int n, const uint8_t *const *payloads, const uint32_t *lens) {
    uint8_t *img = calloc(1, size);
    assert_non_null(img);
    qsf_sfa_header_encode(img, flags, base, 0);
    uint64_t off = QSF_SFA_HEADER_SIZE;
    for (int i = 0; i < n; i++) {
        assert_true(off + 8 + lens[i] <= size);
        qsf_sfa_frame_encode(img + off, payloads[i], lens[i]);
        off += 8 + lens[i];
    }
    tu_write_file(st_path(dir, name), img, size);
    free(img);
    return off;
}

uint64_t st_segment_str(const char *dir, const char *name, uint64_t size, uint8_t flags,
                        int64_t base, int n, const char *const *strs) {
    const uint8_t *p[64];
    uint32_t l[64];
    assert_true(n <= 64);
    for (int i = 0; i < n; i++) {
        p[i] = (const uint8_t *) strs[i];
        l[i] = (uint32_t) strlen(strs[i]);
    }
    return st_segment(dir, name, size, flags, base, n, p, l);
}

static void dual(const char *path, const uint8_t rec[64], int64_t gen) {
    uint8_t img[8192] = {0};
    memcpy(img + (gen & 1) * 4096, rec, 64);
    tu_write_file(path, img, sizeof img);
}

void st_manifest(const char *dir, int64_t gen, int64_t head, int64_t active) {
    uint8_t rec[64];
    qsf_sfm_encode(rec, gen, head, active);
    dual(st_path(dir, QSF_NAME_MANIFEST), rec, gen);
}

void st_watermark(const char *dir, int64_t gen, int64_t fsn) {
    uint8_t rec[64];
    qsf_akw_encode(rec, gen, fsn);
    dual(st_path(dir, QSF_NAME_WATERMARK), rec, gen);
}

size_t st_qwp(uint8_t *out, uint8_t flags, uint32_t start, int n, const char *const *strs) {
    size_t p = 12;
    if (flags & 0x08) {
        p += qsf_put_varint(out + p, start);
        p += qsf_put_varint(out + p, (uint64_t) n);
        for (int i = 0; i < n; i++) {
            size_t l = strlen(strs[i]);
            p += qsf_put_varint(out + p, l);
            memcpy(out + p, strs[i], l);
            p += l;
        }
    }
    qsf_put_u32(out, QSF_QWP_MAGIC);
    out[4] = 1;
    out[5] = flags;
    qsf_put_u16(out + 6, 0);
    qsf_put_u32(out + 8, (uint32_t) (p - 12));
    return p;
}

void st_patch(const char *path, uint64_t off, const void *bytes, size_t n) {
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long) off, SEEK_SET), 0);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

bool st_exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

uint64_t st_size(const char *path) {
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return (uint64_t) st.st_size;
}

void st_open_ok(const char *sf_dir, qsf_slot_recovered *r) {
    qsf_errinfo e;
    int rc = qsf_slot_open_sized(sf_dir, "default", QSF_DUR_MEMORY, 4096, r, &e);
    if (rc != QSF_OK)
        fail_msg("qsf_slot_open failed: %s %s", qsf_err_name(rc), e.msg);
}

const char *st_open_fail(const char *sf_dir, int code) {
    static qsf_errinfo e;
    qsf_slot_recovered r;
    int rc = qsf_slot_open_sized(sf_dir, "default", QSF_DUR_MEMORY, 4096, &r, &e);
    if (rc == QSF_OK)
        qsf_slot_release(&r);
    if (rc != code)
        fail_msg("expected %s, got %s: %s", qsf_err_name(code), qsf_err_name(rc), rc ? e.msg : "");
    return e.msg;
}
