/* Names and widths of QWP column types (docs/PROTOCOL.md §5.2). */
#include "qwp/types.h"

struct type_desc {
    const char *name;
    uint8_t width; /* bytes per value for fixed-width types, else 0 */
};

/* Indexed by type code; a NULL name marks an unassigned code. */
static const struct type_desc types[QSF_QWP_TYPE_MAX + 1] = {
    [QSF_QWP_BOOLEAN] = {"BOOLEAN", 0},
    [QSF_QWP_BYTE] = {"BYTE", 1},
    [QSF_QWP_SHORT] = {"SHORT", 2},
    [QSF_QWP_INT] = {"INT", 4},
    [QSF_QWP_LONG] = {"LONG", 8},
    [QSF_QWP_FLOAT] = {"FLOAT", 4},
    [QSF_QWP_DOUBLE] = {"DOUBLE", 8},
    [QSF_QWP_SYMBOL] = {"SYMBOL", 0},
    [QSF_QWP_TIMESTAMP] = {"TIMESTAMP", 8},
    [QSF_QWP_DATE] = {"DATE", 8},
    [QSF_QWP_UUID] = {"UUID", 16},
    [QSF_QWP_LONG256] = {"LONG256", 32},
    [QSF_QWP_GEOHASH] = {"GEOHASH", 0},
    [QSF_QWP_VARCHAR] = {"VARCHAR", 0},
    [QSF_QWP_TIMESTAMP_NANOS] = {"TIMESTAMP_NANOS", 8},
    [QSF_QWP_DOUBLE_ARRAY] = {"DOUBLE_ARRAY", 0},
    [QSF_QWP_LONG_ARRAY] = {"LONG_ARRAY", 0},
    [QSF_QWP_DECIMAL64] = {"DECIMAL64", 8},
    [QSF_QWP_DECIMAL128] = {"DECIMAL128", 16},
    [QSF_QWP_DECIMAL256] = {"DECIMAL256", 32},
    [QSF_QWP_CHAR] = {"CHAR", 2},
    [QSF_QWP_BINARY] = {"BINARY", 0},
    [QSF_QWP_IPV4] = {"IPV4", 4},
};

bool qsf_qwp_type_valid(int type) {
    return type > 0 && type <= QSF_QWP_TYPE_MAX && types[type].name != NULL;
}

const char *qsf_qwp_type_name(int type) {
    return qsf_qwp_type_valid(type) ? types[type].name : "?";
}

size_t qsf_qwp_type_width(int type) {
    return qsf_qwp_type_valid(type) ? types[type].width : 0;
}

int qsf_qwp_decimal_max_scale(int type) {
    switch (type) {
    case QSF_QWP_DECIMAL64:
        return QSF_QWP_MAX_SCALE64;
    case QSF_QWP_DECIMAL128:
        return QSF_QWP_MAX_SCALE128;
    case QSF_QWP_DECIMAL256:
        return QSF_QWP_MAX_SCALE256;
    default:
        return -1;
    }
}
