// include/qsf.hpp's columns: qsf::chunk (typed columns and Arrow import)
// published by both sender flavours into the qwp-sink command, refusals
// carried as a status (or a qsf::error through qsf::check), moves leaving an
// empty chunk. Built twice, as is and with -fno-exceptions.
#include "qsf.hpp"

#include "sinkproc.h"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

extern "C" { // cmocka.h declares its functions without a C linkage block
#include <cmocka.h>
}
#include <unistd.h>

namespace {

const char *SINK_EXE;
char dir[512];
sinkproc sink;

std::string conf_for(std::uint16_t port) {
    return "ws::addr=127.0.0.1:" + std::to_string(port) + ";";
}

int setup(void **) {
    const char *tmp = std::getenv("TMPDIR");
    std::snprintf(dir, sizeof dir, "%s/qsf-hppc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    return sinkproc_start(&sink, SINK_EXE, dir);
}

int teardown(void **) {
    sinkproc_stop(&sink);
    std::string rm = std::string("rm -rf '") + dir + "'";
    return std::system(rm.c_str()) == 0 ? 0 : -1;
}

std::int64_t rows_with(const char *table, const char *needle = nullptr) {
    return sinkproc_count(&sink, table, needle);
}

constexpr std::size_t N = 10;
const std::int64_t ids[N] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
const double prices[N] = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5};
const std::uint8_t price_valid[2] = {0xef, 0x03}; // row 4 null
const bool flags[N] = {true, false, true, false, true, false, true, false, true, false};
const char16_t chars[N] = {u'a', u'b', u'c', u'd', u'e', u'f', u'g', u'h', u'i', u'j'};
const std::int8_t codes[N] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
const std::int32_t dict_offs[3] = {0, 3, 6};
const char dict[] = "BTCETH";
const std::int64_t ts[N] = {1767225600000000, 1767225600000001, 1767225600000002, 1767225600000003,
                            1767225600000004, 1767225600000005, 1767225600000006, 1767225600000007,
                            1767225600000008, 1767225600000009};

void fill(qsf::chunk &c) {
    assert_true(static_cast<bool>(c.column("id", ids, nullptr, 0, N)));
    assert_true(static_cast<bool>(c.column("price", prices, price_valid, 0, N)));
    assert_true(static_cast<bool>(c.column("flag", flags, nullptr, 0, N)));
    assert_true(static_cast<bool>(c.column("ch", chars, nullptr, 0, N)));
    assert_true(static_cast<bool>(c.symbol_dict("sym", codes, dict_offs, dict, 2, nullptr, 0, N)));
    assert_true(static_cast<bool>(c.at(ts, QSF_UNIT_MICROS, 0, N)));
}

void check_rows(const char *table) {
    assert_int_equal(rows_with(table), N);
    assert_int_equal(rows_with(table, "\"id\":\"7\""), 1);
    assert_int_equal(rows_with(table, "\"sym\":\"ETH\""), 5);
    assert_int_equal(rows_with(table, "\"price\":null"), 1);
}

void nothrow_chunk_arrives(void **) {
    qsf::nothrow_sender s;
    assert_true(static_cast<bool>(qsf::nothrow_sender::open(conf_for(sink.port), s)));
    qsf::chunk c;
    assert_true(static_cast<bool>(qsf::chunk::open("hppc_nt", c)));
    fill(c);
    assert_int_equal(c.rows(), N);
    // a column of another row count is refused and leaves the chunk as it was
    qsf::status st = c.column("short", ids, nullptr, 0, N - 1);
    assert_int_equal(st.code(), QSF_E_VALUE);
    assert_non_null(std::strstr(st.message(), "short"));
    assert_int_equal(c.rows(), N);
    std::int64_t fsn = -1;
    assert_true(static_cast<bool>(s.flush(c, fsn)));
    assert_true(static_cast<bool>(s.wait(fsn)));
    assert_true(s.close().ok());
    check_rows("hppc_nt");
}

// A record batch of two columns (k int64, ts timestamp[us]) built by hand.
struct batch {
    const void *k_bufs[2] = {nullptr, ids};
    const void *ts_bufs[2] = {nullptr, ts};
    const void *top_bufs[1] = {nullptr};
    ArrowSchema k_s{}, ts_s{}, top_s{};
    ArrowArray k_a{}, ts_a{}, top_a{};
    ArrowSchema *sk[2] = {&k_s, &ts_s};
    ArrowArray *ak[2] = {&k_a, &ts_a};
    static void rel_s(ArrowSchema *s) {
        s->release = nullptr;
    }
    static void rel_a(ArrowArray *a) {
        a->release = nullptr;
    }
    batch() {
        k_s.format = "l";
        k_s.name = "k";
        ts_s.format = "tsu:UTC";
        ts_s.name = "ts";
        top_s.format = "+s";
        top_s.n_children = 2;
        top_s.children = sk;
        for (ArrowSchema *s : {&k_s, &ts_s, &top_s})
            s->release = rel_s;
        k_a.length = ts_a.length = top_a.length = N;
        k_a.n_buffers = ts_a.n_buffers = 2;
        k_a.buffers = k_bufs;
        ts_a.buffers = ts_bufs;
        top_a.n_buffers = 1;
        top_a.buffers = top_bufs;
        top_a.n_children = 2;
        top_a.children = ak;
        for (ArrowArray *a : {&k_a, &ts_a, &top_a})
            a->release = rel_a;
    }
};

void nothrow_arrow_batch_arrives(void **) {
    qsf::nothrow_sender s;
    assert_true(static_cast<bool>(qsf::nothrow_sender::open(conf_for(sink.port), s)));
    batch b;
    qsf::chunk c;
    assert_true(static_cast<bool>(qsf::chunk::open("hppc_arrow", c)));
    assert_true(static_cast<bool>(c.arrow_batch(b.top_s, b.top_a, "ts")));
    // one more column through arrow_column, renamed
    assert_true(static_cast<bool>(c.arrow_column(b.k_s, b.k_a, "k2")));
    // a format qsf does not take
    b.k_s.format = "tts";
    qsf::status st = c.arrow_column(b.k_s, b.k_a, "t");
    assert_int_equal(st.code(), QSF_E_UNSUPPORTED);
    assert_non_null(std::strstr(st.message(), "\"tts\""));
    std::int64_t fsn = -1;
    assert_true(static_cast<bool>(s.flush(c, fsn)));
    assert_true(s.close().ok());
    assert_int_equal(rows_with("hppc_arrow"), N);
    assert_int_equal(rows_with("hppc_arrow", "\"k2\":\"3\""), 1);
}

void moves_leave_an_empty_chunk(void **) {
    qsf::chunk a;
    assert_true(static_cast<bool>(qsf::chunk::open("t", a)));
    qsf::chunk b(std::move(a));
    assert_false(static_cast<bool>(a));
    assert_true(static_cast<bool>(b));
    assert_true(static_cast<bool>(b.column("id", ids, nullptr, 0, N)));
    a = std::move(b);
    assert_int_equal(a.rows(), N);
    a.clear();
    assert_int_equal(a.rows(), 0);
    qsf::chunk bad;
    assert_int_equal(qsf::chunk::open("a/b", bad).code(), QSF_E_VALUE);
    assert_false(static_cast<bool>(bad));
}

#ifdef QSF_HPP_EXCEPTIONS
void throwing_chunk_and_stream(void **) {
    qsf::sender s(conf_for(sink.port));
    qsf::chunk c("hppc_ex");
    fill(c);
    bool thrown = false;
    try {
        qsf::check(c.column("id", ids, nullptr, 0, N)); // named twice
    } catch (const qsf::error &e) {
        thrown = e.code() == QSF_E_VALUE && std::strstr(e.what(), "id") != nullptr;
    }
    assert_true(thrown);
    s.wait(s.flush(c));
    // a stream of one batch, released by qsf, the stream left to us
    struct state {
        batch b;
        int next = 0;
    } st;
    ArrowArrayStream stream{};
    stream.private_data = &st;
    stream.get_schema = [](ArrowArrayStream *self, ArrowSchema *out) {
        *out = static_cast<state *>(self->private_data)->b.top_s;
        return 0;
    };
    stream.get_next = [](ArrowArrayStream *self, ArrowArray *out) {
        auto *p = static_cast<state *>(self->private_data);
        *out = p->next++ == 0 ? p->b.top_a : ArrowArray{};
        return 0;
    };
    stream.get_last_error = [](ArrowArrayStream *) -> const char * { return nullptr; };
    stream.release = [](ArrowArrayStream *self) { self->release = nullptr; };
    assert_int_equal(s.send_arrow_stream("hppc_stream", stream, "ts"), N);
    assert_non_null(stream.release);
    // the typed overload passes the types through: an int64 field cannot be a
    // SYMBOL (refused at the batch), a name that is no field before it
    const qsf_arrow_col_type as_symbol[] = {{"K", QSF_TYPE_SYMBOL}}, typo[] = {{"kk", 0}};
    for (const qsf_arrow_col_type *t : {as_symbol, typo}) {
        st.next = 0;
        int code = 0;
        try {
            s.send_arrow_stream("hppc_typed", stream, "ts", t, 1);
        } catch (const qsf::error &e) {
            code = e.code();
        }
        assert_int_equal(code, t == typo ? QSF_E_VALUE : QSF_E_UNSUPPORTED);
    }
    st.next = 0;
    const qsf_arrow_col_type as_is[] = {{"k", QSF_TYPE_AUTO}};
    assert_int_equal(s.send_arrow_stream("hppc_typed", stream, "ts", as_is, 1), N);
    thrown = false;
    try {
        qsf::chunk bad("a/b");
    } catch (const qsf::error &e) {
        thrown = e.code() == QSF_E_VALUE;
    }
    assert_true(thrown);
    s.close();
    check_rows("hppc_ex");
    assert_int_equal(rows_with("hppc_stream"), N);
}
#endif

} // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: test_qsf_hpp_chunk QWP_SINK\n");
        return 2;
    }
    SINK_EXE = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothrow_chunk_arrives),
        cmocka_unit_test(nothrow_arrow_batch_arrives),
        cmocka_unit_test(moves_leave_an_empty_chunk),
#ifdef QSF_HPP_EXCEPTIONS
        cmocka_unit_test(throwing_chunk_and_stream),
#endif
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
