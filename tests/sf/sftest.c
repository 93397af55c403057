/* Slot file builders for the sf tests (see sftest.h). */
#include "sftest.h"

#include "testutil.h"

#include "bytes.h"
#include "qwp/encoder.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sidefile.h"
#include "sf/slot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>
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
        assert_true(off + QSF_SFA_FRAME_OVERHEAD + lens[i] <= size);
        qsf_sfa_frame_encode(img + off, payloads[i], lens[i]);
        off += QSF_SFA_FRAME_OVERHEAD + lens[i];
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

void st_unreplayable_segment(const char *name, uint64_t size) {
    static const char *const x[] = {"x"}, *const y[] = {"y"};
    uint8_t p[2][64];
    const uint8_t *pp[2] = {p[0], p[1]};
    uint32_t l[2] = {(uint32_t) st_qwp(p[0], 0x08, 0, 1, x),
                     (uint32_t) st_qwp(p[1], 0x08, 0, 1, y)};
    st_segment(st_slot, name, size, QSF_SFA_FLAG_MANIFEST_REQUIRED, 0, 2, pp, l);
}

size_t st_qwp_table(uint8_t *out, uint8_t flags, const char *table, uint32_t rows, size_t len,
                    uint8_t fill) {
    size_t p = 12, n = strlen(table);
    out[p++] = 0; /* delta section: start 0, count 0 */
    out[p++] = 0;
    p += qsf_put_varint(out + p, n);
    memcpy(out + p, table, n);
    p += n;
    p += qsf_put_varint(out + p, rows);
    assert_true(p <= len);
    memset(out + p, fill, len - p);
    qsf_put_u32(out, QSF_QWP_MAGIC);
    out[4] = 1;
    out[5] = (uint8_t) (flags | 0x08);
    qsf_put_u16(out + 6, 1);
    qsf_put_u32(out + 8, (uint32_t) (len - 12));
    return len;
}

void st_segment_flushes(const char *name, uint64_t size, int64_t base, const char *kinds,
                        uint32_t rows) {
    static uint8_t buf[64][40];
    const uint8_t *p[64];
    uint32_t l[64];
    int n = (int) strlen(kinds);
    assert_true(n <= 64);
    for (int i = 0; i < n; i++) {
        l[i] = (uint32_t) st_qwp_table(buf[i], kinds[i] == 'D' ? 0x01 : 0, "t", rows, 40,
                                       (uint8_t) ('a' + (base + i) % 26));
        p[i] = buf[i];
    }
    st_segment(st_slot, name, size, QSF_SFA_FLAG_MANIFEST_REQUIRED, base, n, p, l);
}

void st_read_frames(const char *path, st_frames *f) {
    memset(f, 0, sizeof *f);
    size_t n;
    uint8_t *img = tu_read_file(path, &n);
    const uint64_t env = QSF_SFA_FRAME_OVERHEAD;
    uint64_t off = QSF_SFA_HEADER_SIZE;
    while (n >= env && off <= n - env && f->n < 256) {
        const uint8_t *fr = img + off, *payload = fr + QSF_SFA_FRAME_AT_PAYLOAD;
        uint32_t len = qsf_sfa_frame_len(fr);
        if (len > n - off - env || qsf_sfa_frame_crc(payload, len) != qsf_sfa_frame_stored_crc(fr))
            break;
        f->p[f->n] = malloc(len ? len : 1);
        memcpy(f->p[f->n], payload, len);
        f->len[f->n] = len;
        f->off[f->n++] = off;
        off += env + len;
    }
    f->end = off;
    free(img);
}

void st_expect_clean_after(const char *path, const st_frames *f) {
    size_t sz;
    uint8_t *img = tu_read_file(path, &sz);
    for (size_t k = f->end; k < sz; k++)
        if (img[k])
            fail_msg("%s has a non-zero byte at %zu after its last frame", path, k);
    free(img);
}

void st_expect_manifest(int64_t gen, int64_t head, int64_t active) {
    size_t n;
    uint8_t *img = tu_read_file(st_path(st_slot, QSF_NAME_MANIFEST), &n);
    assert_int_equal(n, 8192);
    int64_t g, h, a;
    assert_int_equal(qsf_sfm_pick(img, &g, &h, &a), 0);
    free(img);
    if (gen > 0)
        assert_int_equal(g, gen);
    assert_int_equal(h, head);
    assert_int_equal(a, active);
}

void st_frames_free(st_frames *f) {
    for (int i = 0; i < f->n; i++)
        free(f->p[i]);
    f->n = 0;
}

bool st_is_placeholder(const uint8_t *p, uint32_t len) {
    uint8_t want[QSF_QWP_PLACEHOLDER_LEN];
    qsf_qwp_placeholder(want);
    return len == sizeof want && memcmp(p, want, len) == 0;
}

bool st_is_empty_commit(const uint8_t *p, uint32_t len) {
    uint8_t want[QSF_QWP_EMPTY_COMMIT_LEN];
    qsf_qwp_empty_commit(want);
    return len == sizeof want && memcmp(p, want, len) == 0;
}

int st_count_names(const char *dir, const char *prefix, const char *part) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strstr(e->d_name, part))
            n++;
    closedir(d);
    return n;
}

const char *st_gen(int g) {
    static char names[4][QSF_SEG_NAME_MAX];
    static int next;
    char *n = names[next++ % 4];
    qsf_seg_name((uint64_t) g, n);
    return n;
}

void st_snap_take(st_snap *s) {
    memset(s, 0, sizeof *s);
    DIR *d = opendir(st_slot);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
            continue;
        if (!strcmp(e->d_name, QSF_NAME_LOCK) || !strcmp(e->d_name, QSF_NAME_LOCK_PID))
            continue;
        assert_true(s->n < 32);
        snprintf(s->names[s->n], sizeof s->names[0], "%s", e->d_name);
        s->data[s->n] = tu_read_file(st_path(st_slot, e->d_name), &s->len[s->n]);
        s->n++;
    }
    closedir(d);
}

void st_snap_expect_same(const st_snap *before) {
    st_snap now;
    st_snap_take(&now);
    assert_int_equal(now.n, before->n);
    for (int i = 0; i < before->n; i++) {
        int j = 0;
        while (j < now.n && strcmp(now.names[j], before->names[i]) != 0)
            j++;
        if (j == now.n)
            fail_msg("%s disappeared", before->names[i]);
        assert_int_equal(now.len[j], before->len[i]);
        assert_memory_equal(now.data[j], before->data[i], before->len[i]);
    }
    st_snap_free(&now);
}

void st_snap_free(st_snap *s) {
    for (int i = 0; i < s->n; i++)
        free(s->data[i]);
    s->n = 0;
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

/* ---- reference files ---- */

const char *st_fixture_path(const char *name) {
    static char bufs[4][1024];
    static int next;
    char rel[300], *b = bufs[next++ % 4];
    snprintf(rel, sizeof rel, "interop/%s", name);
    return tu_shared_path(rel, b, sizeof bufs[0]);
}

bool st_fixtures_present(char *why, size_t cap) {
    static const char *const names[] = ST_FIXTURES;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *p = st_fixture_path(names[i]);
        if (access(p, R_OK) != 0) {
            snprintf(why, cap,
                     "the Java-written fixtures are not here (%s: %s); they come from "
                     "../shared/interop beside the checkout or QSF_SHARED_DIR, and qsf's own "
                     "tests/golden files check the same format without them",
                     p, strerror(errno));
            return false;
        }
    }
    return true;
}

uint8_t *st_golden(const char *name, size_t *len) {
    const char *root = getenv("QSF_SOURCE_ROOT");
    if (!root)
        fail_msg("QSF_SOURCE_ROOT is not set: run the tests with meson test");
    char p[1024];
    snprintf(p, sizeof p, "%s/tests/golden/%s", root, name);
    return tu_read_hex_file(p, len);
}
