/* One Arrow array becomes one chunk column: the format string picks the typed
 * qsf_chunk_* call (docs/ARROW.md has the whole matrix), after the array's
 * structure is checked against what that format needs. The typed call checks
 * the values themselves (UTF-8, sentinels, codes in range); its message gets
 * the Arrow format in front. */
#include "chunk/arrow_int.h"

#include "err.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const int64_t qsf_arrow_empty_buf[4];

int qsf_arrow_refuse(const qsf_arrow_col *x, qsf_errinfo *err, const char *why) {
    return qsf_err_set(err, QSF_E_UNSUPPORTED, 0, 0, "column %s (arrow format \"%s\"): %s",
                       x->who.name, x->who.format, why);
}

int qsf_arrow_invalid(const qsf_arrow_col *x, qsf_errinfo *err, const char *fmt, int64_t a,
                      int64_t b) {
    char what[160];
    snprintf(what, sizeof what, fmt, a, b);
    return qsf_err_set(err, QSF_E_VALUE, 0, 0, "column %s (arrow format \"%s\"): %s", x->who.name,
                       x->who.format, what);
}

/* Prefixes a typed call's message with the Arrow format it came from. */
int qsf_arrow_typed(const qsf_arrow_col *x, int rc, qsf_errinfo *err) {
    if (rc != QSF_OK) {
        char pre[80];
        snprintf(pre, sizeof pre, "arrow format \"%s\"", x->who.format);
        qsf_err_prefix(err, pre);
    }
    return rc;
}

static int add_int(const qsf_arrow_col *x, qsf_errinfo *err) {
    const void *d = qsf_arrow_buf(x, 1);
    switch (x->fmt.kind) {
    case QSF_AK_I8:
        return QSF_ARROW_CALL(qsf_chunk_i8, d);
    case QSF_AK_I16:
        return QSF_ARROW_CALL(qsf_chunk_i16, d);
    case QSF_AK_I32:
        return QSF_ARROW_CALL(qsf_chunk_i32, d);
    case QSF_AK_I64:
        return QSF_ARROW_CALL(qsf_chunk_i64, d);
    case QSF_AK_U8:
        return QSF_ARROW_CALL(qsf_chunk_u8, d);
    case QSF_AK_U16:
        if (x->want == QSF_TYPE_CHAR)
            return QSF_ARROW_CALL(qsf_chunk_char, d);
        return QSF_ARROW_CALL(qsf_chunk_u16, d);
    case QSF_AK_U32:
        if (x->want == QSF_TYPE_IPV4)
            return QSF_ARROW_CALL(qsf_chunk_ipv4, d);
        return QSF_ARROW_CALL(qsf_chunk_u32, d);
    case QSF_AK_U64:
        return QSF_ARROW_CALL(qsf_chunk_u64, d);
    case QSF_AK_F32:
        return QSF_ARROW_CALL(qsf_chunk_f32, d);
    case QSF_AK_F64:
        return QSF_ARROW_CALL(qsf_chunk_f64, d);
    case QSF_AK_BOOL:
        return QSF_ARROW_CALL(qsf_chunk_bool, d);
    default:
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "arrow: not a fixed-width kind");
    }
}

static int add_temporal(const qsf_arrow_col *x, qsf_errinfo *err) {
    const void *d = qsf_arrow_buf(x, 1);
    switch (x->fmt.kind) {
    case QSF_AK_DATE32:
        return QSF_ARROW_CALL(qsf_chunk_date_days, d);
    case QSF_AK_DATE64:
        return QSF_ARROW_CALL(qsf_chunk_date_millis, d);
    default: /* QSF_AK_TIMESTAMP: the time zone is display only, values are UTC */
        return QSF_ARROW_CALL(qsf_chunk_timestamp, d, x->fmt.unit);
    }
}

static int add_decimal(const qsf_arrow_col *x, qsf_errinfo *err) {
    const void *d = qsf_arrow_buf(x, 1);
    if (x->fmt.scale < 0)
        return qsf_arrow_refuse(x, err,
                                "a negative decimal scale: QuestDB decimals have scale >= 0");
    switch (x->fmt.bits) {
    case 64:
        return QSF_ARROW_CALL(qsf_chunk_decimal64, d, x->fmt.scale);
    case 128:
        return QSF_ARROW_CALL(qsf_chunk_decimal128, d, x->fmt.scale);
    case 256:
        return QSF_ARROW_CALL(qsf_chunk_decimal256, d, x->fmt.scale);
    default: /* 32 */
        return qsf_arrow_add_converted(x, err);
    }
}

static int add_fixbin(const qsf_arrow_col *x, qsf_errinfo *err) {
    const void *d = qsf_arrow_buf(x, 1);
    if (x->fmt.width == 16 && x->want == QSF_TYPE_UUID)
        return QSF_ARROW_CALL(qsf_chunk_uuid, d);
    if (x->fmt.width == 32 && x->want == QSF_TYPE_LONG256)
        return QSF_ARROW_CALL(qsf_chunk_long256, d);
    return qsf_arrow_refuse(
        x, err,
        "fixed_size_binary is UUID (w:16) or LONG256 (w:32) only when asked: field "
        "metadata questdb.type, the arrow.uuid extension or qsf_chunk_arrow_type");
}

/* utf8 / large_utf8 / binary / large_binary. The typed call checks the
 * offsets (none negative, none decreasing; the data buffer is as long as the
 * last one says), so they are scanned once. */
static int add_var(const qsf_arrow_col *x, qsf_errinfo *err) {
    const void *o = qsf_arrow_buf(x, 1), *d = qsf_arrow_buf(x, 2);
    bool sym = x->want == QSF_TYPE_SYMBOL;
    switch (x->fmt.kind) {
    case QSF_AK_UTF8:
        return sym ? QSF_ARROW_CALL(qsf_chunk_symbol, o, d)
                   : QSF_ARROW_CALL(qsf_chunk_varchar, o, d);
    case QSF_AK_LUTF8:
        return sym ? QSF_ARROW_CALL(qsf_chunk_symbol64, o, d)
                   : QSF_ARROW_CALL(qsf_chunk_varchar64, o, d);
    case QSF_AK_BINARY:
        return QSF_ARROW_CALL(qsf_chunk_binary, o, d);
    default:
        return QSF_ARROW_CALL(qsf_chunk_binary64, o, d);
    }
}

/* The kinds QuestDB has no column for, each with the reason. */
static const char *refused_kind(qsf_arrow_kind k) {
    switch (k) {
    case QSF_AK_NULL:
        return "the null type has no QuestDB column type to create";
    case QSF_AK_TIME:
        return "time32/time64: QuestDB has no time-of-day type; cast to int64";
    case QSF_AK_DURATION:
        return "duration: QuestDB has no duration type; cast to int64";
    case QSF_AK_INTERVAL:
        return "interval: QuestDB has no interval column type";
    case QSF_AK_LLIST:
        return "large_list: DOUBLE arrays take 32-bit list offsets; cast to list<float64>";
    case QSF_AK_LISTVIEW:
        return "list_view: not taken; cast to list<float64>";
    case QSF_AK_STRUCT:
        return "a struct is a record batch (qsf_chunk_arrow_batch), not a column";
    case QSF_AK_MAP:
        return "map: QuestDB has no map type";
    case QSF_AK_UNION:
        return "union: QuestDB has no union type";
    case QSF_AK_RUNEND:
        return "run-end encoded: not taken; decode it first";
    default:
        return NULL;
    }
}

/* The buffers and children each taken kind has. */
static int check_layout(const qsf_arrow_col *x, qsf_errinfo *err) {
    int64_t nb = 2, nc = 0;
    switch (x->fmt.kind) {
    case QSF_AK_UTF8:
    case QSF_AK_LUTF8:
    case QSF_AK_BINARY:
    case QSF_AK_LBINARY:
        nb = 3;
        break;
    case QSF_AK_LIST:
        nc = 1;
        break;
    case QSF_AK_FIXLIST:
        nb = 1, nc = 1;
        break;
    case QSF_AK_UTF8VIEW:
    case QSF_AK_BINVIEW:
        return QSF_OK; /* a variable number of buffers: arrow_convert.c */
    default:
        break;
    }
    return qsf_arrow_check_array(x->v.a, nb, nc, true, &x->who, err);
}

/* The override asked for must fit the format. */
static int check_want(const qsf_arrow_col *x, qsf_errinfo *err) {
    qsf_arrow_kind k = x->fmt.kind;
    bool text = k == QSF_AK_UTF8 || k == QSF_AK_LUTF8 || k == QSF_AK_UTF8VIEW;
    bool ok = true;
    switch (x->want) {
    case QSF_TYPE_SYMBOL:
    case QSF_TYPE_VARCHAR:
        ok = text;
        break;
    case QSF_TYPE_UUID:
        ok = k == QSF_AK_FIXBIN && x->fmt.width == 16;
        break;
    case QSF_TYPE_LONG256:
        ok = k == QSF_AK_FIXBIN && x->fmt.width == 32;
        break;
    case QSF_TYPE_CHAR:
        ok = k == QSF_AK_U16;
        break;
    case QSF_TYPE_IPV4:
        ok = k == QSF_AK_U32;
        break;
    default:
        break;
    }
    if (ok)
        return QSF_OK;
    static const char *const names[] = {"auto",    "symbol", "varchar", "uuid",
                                        "long256", "char",   "ipv4"};
    char why[96];
    snprintf(why, sizeof why, "the QuestDB type asked for (%s) does not apply to this format",
             names[x->want]);
    return qsf_arrow_refuse(x, err, why);
}

static int add_by_kind(const qsf_arrow_col *x, qsf_errinfo *err) {
    switch (x->fmt.kind) {
    case QSF_AK_DATE32:
    case QSF_AK_DATE64:
    case QSF_AK_TIMESTAMP:
        return add_temporal(x, err);
    case QSF_AK_DECIMAL:
        return add_decimal(x, err);
    case QSF_AK_FIXBIN:
        return add_fixbin(x, err);
    case QSF_AK_UTF8:
    case QSF_AK_LUTF8:
    case QSF_AK_BINARY:
    case QSF_AK_LBINARY:
        return add_var(x, err);
    case QSF_AK_LIST:
    case QSF_AK_FIXLIST:
        return qsf_arrow_add_array(x, err);
    case QSF_AK_F16:
    case QSF_AK_UTF8VIEW:
    case QSF_AK_BINVIEW:
        return qsf_arrow_add_converted(x, err);
    default:
        return add_int(x, err);
    }
}

int qsf_arrow_add_column(qsf_chunk *c, const char *name, size_t name_len,
                         const struct ArrowSchema *schema, qsf_arrow_view v, qsf_errinfo *err) {
    qsf_arrow_col x = {.c = c, .name = name, .name_len = name_len, .schema = schema, .v = v};
    qsf_arrow_who_set(&x.who, name, name_len, schema->format);
    const char *why;
    if (qsf_arrow_fmt_parse(schema->format, &x.fmt, &why) != QSF_OK)
        return qsf_arrow_refuse(&x, err, why);
    x.want = qsf_arrow_wanted_type(c, name, name_len, schema);
    if (x.want < 0)
        return qsf_arrow_refuse(&x, err,
                                "field metadata questdb.type is none of symbol, varchar, uuid, "
                                "long256, char, ipv4");
    if (schema->dictionary != NULL || v.a->dictionary != NULL)
        return qsf_arrow_add_dict(&x, err);
    const char *no = refused_kind(x.fmt.kind);
    if (no != NULL)
        return qsf_arrow_refuse(&x, err, no);
    int rc = check_want(&x, err);
    if (rc == QSF_OK)
        rc = check_layout(&x, err);
    if (rc != QSF_OK)
        return rc;
    if (x.v.len == 0)
        x.v.off = 0; /* an empty array's buffers may be stand-ins */
    return add_by_kind(&x, err);
}
