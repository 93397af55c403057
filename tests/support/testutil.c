/* Shared test helpers (see testutil.h). */
#include "testutil.h"

#include "sf/symdict.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tu_mkdtemp(char *buf, size_t cap) {
    const char *base = getenv("TMPDIR");
    snprintf(buf, cap, "%s/qsf-test-XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(buf));
    return buf;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void) st;
    (void) flag;
    (void) ftw;
    remove(p);
    return 0;
}

void tu_rmtree(const char *path) {
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *tu_shared_path(const char *rel, char *buf, size_t cap) {
    const char *dir = getenv("QSF_SHARED_DIR");
    snprintf(buf, cap, "%s/%s", dir ? dir : "../shared", rel);
    return buf;
}

uint8_t *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t) n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t) n, f), (size_t) n);
    fclose(f);
    *len = (size_t) n;
    return buf;
}

void tu_write_file(const char *path, const void *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot create %s: %s", path, strerror(errno));
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
}

static int hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

size_t tu_hex(const char *hex, uint8_t *out, size_t cap) {
    size_t n = 0;
    int hi = -1;
    for (const char *p = hex; *p; p++) {
        if (isspace((unsigned char) *p))
            continue;
        int v = hexval(*p);
        assert_true(v >= 0);
        if (hi < 0) {
            hi = v;
            continue;
        }
        assert_true(n < cap);
        out[n++] = (uint8_t) (hi << 4 | v);
        hi = -1;
    }
    assert_true(hi < 0);
    return n;
}

uint8_t *tu_read_hex_file(const char *path, size_t *len) {
    size_t tlen;
    uint8_t *text = tu_read_file(path, &tlen);
    text[tlen] = 0;
    uint8_t *out = malloc(tlen / 2 + 1);
    assert_non_null(out);
    *len = tu_hex((const char *) text, out, tlen / 2 + 1);
    free(text);
    return out;
}

bool tu_fd_path_ends_with(int fd, const char *suffix) {
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    size_t k = strlen(suffix);
    return n >= (ssize_t) k && memcmp(path + n - k, suffix, k) == 0;
}

void tu_write_symdict(const char *dir, int n, const char *const *strs) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    qsf_symdict d;
    assert_int_equal(qsf_symdict_create(&d, dfd, dir, NULL), QSF_OK);
    uint32_t lens[16];
    assert_true(n <= 16);
    for (int i = 0; i < n; i++)
        lens[i] = (uint32_t) strlen(strs[i]);
    if (n)
        assert_int_equal(qsf_symdict_append(&d, 0, (uint32_t) n, strs, lens, NULL), QSF_OK);
    qsf_symdict_destroy(&d);
    close(dfd);
}

void tu_tcp_pair(int *client, int *server) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    assert_int_equal(bind(l, (struct sockaddr *) &a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *) &a, &al), 0);
    *client = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(*client, (struct sockaddr *) &a, sizeof a), 0);
    *server = accept(l, NULL, NULL);
    assert_true(*server >= 0);
    close(l);
}
