/* Fuzz target for the server-response parser (docs/PROTOCOL.md §6.6). Any bytes:
 * never crash; when a response parses, every table entry lies inside the input,
 * the iteration ends exactly at the end, and the lengths follow docs/PROTOCOL.md §6.6. */
#include "qwp/response.h"

#include <stdint.h>
#include <stdlib.h>

static void check_tables(const qsf_response *r, const uint8_t *data, size_t size) {
    size_t pos = 0, n = 0;
    qsf_resp_table t;
    while (qsf_response_table(r, &pos, &t)) {
        const uint8_t *name = (const uint8_t *) t.name;
        if (t.name_len == 0 || name < data || name + t.name_len + 8 > data + size)
            abort();
        n++;
    }
    if (n != r->table_count || pos != r->tables_len)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qsf_response r;
    char why[160];
    if (qsf_response_parse(data, size, &r, why, sizeof why) != 0)
        return 0;
    switch (r.kind) {
    case QSF_RESP_OK:
    case QSF_RESP_DURABLE:
        check_tables(&r, data, size);
        break;
    case QSF_RESP_ERROR:
        if (r.msg_len > QSF_RESP_MSG_MAX || size != 11u + r.msg_len)
            abort();
        break;
    default:
        break;
    }
    return 0;
}
