/* The benchmark schemas, written once for both row APIs (no include guard: a
 * benchmark includes it once per API).
 *
 *   narrow   symbol, long, double, varchar(16), designated ts
 *   wide     20 mixed columns + designated ts
 *   symbols  narrow with the symbol drawn from many distinct values (nsyms)
 *
 * Before including, define ROW_FN(name) (the function's name), ROW_H (the
 * handle's type) and ROW_CALL(h, fn, ...) (one call of the API: fn is the
 * batch function's suffix, e.g. col_i64; it yields 0 on success). Each row
 * function returns 0 when every call succeeded. The caller fills syms[] and
 * sym_len[] before the first row. */

static int ROW_FN(narrow)(ROW_H h, uint64_t i, uint32_t nsyms) {
    uint32_t k = (uint32_t) ((i * 2654435761u) % nsyms);
    int bad = ROW_CALL(h, table, "trades", 6);
    bad |= ROW_CALL(h, symbol, "sym", 3, syms[k], sym_len[k]);
    bad |= ROW_CALL(h, col_i64, "qty", 3, (int64_t) i);
    bad |= ROW_CALL(h, col_f64, "px", 2, 100.0 + (double) (i & 1023) * 0.01);
    bad |= ROW_CALL(h, col_varchar, "note", 4, "order-0123456789", 16);
    bad |= ROW_CALL(h, at_micros, 1700000000000000 + (int64_t) i * 10);
    return bad;
}

static int ROW_FN(wide)(ROW_H h, uint64_t i, uint32_t nsyms) {
    (void) nsyms;
    int bad = ROW_CALL(h, table, "wide", 4);
    bad |= ROW_CALL(h, symbol, "s1", 2, syms[i % 50], sym_len[i % 50]);
    bad |= ROW_CALL(h, symbol, "s2", 2, syms[i % 7], sym_len[i % 7]);
    bad |= ROW_CALL(h, col_i64, "l1", 2, (int64_t) i);
    bad |= ROW_CALL(h, col_i64, "l2", 2, (int64_t) (i * 3));
    bad |= ROW_CALL(h, col_i32, "i1", 2, (int32_t) i);
    bad |= ROW_CALL(h, col_i16, "h1", 2, (int16_t) i);
    bad |= ROW_CALL(h, col_i8, "b1", 2, (int8_t) i);
    bad |= ROW_CALL(h, col_bool, "f1", 2, i & 1);
    bad |= ROW_CALL(h, col_f64, "d1", 2, (double) i * 0.5);
    bad |= ROW_CALL(h, col_f64, "d2", 2, (double) i * 0.25);
    bad |= ROW_CALL(h, col_f32, "r1", 2, (float) i);
    bad |= ROW_CALL(h, col_varchar, "v1", 2, "alpha-beta-gamma", 16);
    bad |= ROW_CALL(h, col_varchar, "v2", 2, "x", 1);
    bad |= ROW_CALL(h, col_ts_micros, "t1", 2, 1700000000000000 + (int64_t) i);
    bad |= ROW_CALL(h, col_date, "dt", 2, 1700000000000 + (int64_t) i);
    bad |= ROW_CALL(h, col_uuid, "u1", 2, i, ~i);
    bad |= ROW_CALL(h, col_char, "c1", 2, (uint16_t) ('A' + i % 26));
    bad |= ROW_CALL(h, col_ipv4, "ip", 2, 0x0A000001u + (uint32_t) (i & 255));
    bad |= ROW_CALL(h, col_decimal64, "px", 2, (int64_t) i * 100, 2);
    bad |= ROW_CALL(h, col_geohash, "g", 1, i, 30);
    bad |= ROW_CALL(h, at_micros, 1700000000000000 + (int64_t) i * 10);
    return bad;
}
