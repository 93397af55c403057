/* Fuzz target for the qwp-sink parsers of untrusted bytes: the HTTP upgrade
 * request (parse + validation + response), the WebSocket frame header, and the
 * fault-script grammar. The first input byte picks the parser (mod 3); the rest
 * is its input. The sink sources are compiled in directly so scripts/fuzz.sh,
 * which builds lib/ only, can build this target too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/qwp-sink/fault.c"
#include "../../tools/qwp-sink/http.c"
#include "../../tools/qwp-sink/wsframe.c"

static void fuzz_http(const uint8_t *p, size_t n) {
    static struct http_req req;
    if (http_parse((const char *) p, n, &req) != 1)
        return;
    struct hs_policy pol = {"user:pass", "token", NULL, NULL};
    struct hs_result res;
    http_validate(&req, &pol, &res);
    struct buf out = {0};
    if (res.status == 101) {
        struct hs_reply r = {"1", res.durable_requested, "STANDALONE", 2097138};
        http_write_101(&out, res.accept, &r);
    } else {
        http_write_reject(&out, res.status, res.reason, "REPLICA", NULL);
    }
    buf_free(&out);
}

static void fuzz_frames(const uint8_t *p, size_t n) {
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, p, n);
    size_t off = 0;
    struct wsf_hdr h;
    while (off < n && wsf_parse_hdr(copy + off, n - off, &h) == 1) {
        if (h.len > n - off - h.hdr_len)
            break;
        wsf_unmask(copy + off + h.hdr_len, (size_t) h.len, h.mask);
        (void) wsf_close_echo_code(h.len >= 2 ? (copy[off + h.hdr_len] << 8) : -1);
        off += h.hdr_len + (size_t) h.len;
    }
    free(copy);
}

static void fuzz_faults(const uint8_t *p, size_t n) {
    char line[1100];
    n = n < sizeof line - 1 ? n : sizeof line - 1;
    memcpy(line, p, n);
    line[n] = '\0';
    struct fault_set fs = {0};
    char err[256];
    if (fault_parse(&fs, line, err, sizeof err) == 0) {
        struct fault out[8];
        fault_take(&fs, 1, FT_FRAMES, 0, out, 8);
        fault_next_bytes(&fs, 1, 0);
    }
    fault_clear(&fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    switch (data[0] % 3) {
    case 0:
        fuzz_http(data + 1, size - 1);
        break;
    case 1:
        fuzz_frames(data + 1, size - 1);
        break;
    default:
        fuzz_faults(data + 1, size - 1);
        break;
    }
    return 0;
}
