// include/qsf.hpp against the qwp-sink command (a child process on 127.0.0.1,
// port 0): the fluent rows arrive with the types they were given, failures
// carry the code, the flags and qsf's message, a failed or abandoned row
// leaves nothing behind. Built twice: as is, and with -fno-exceptions (then
// only the error-returning flavour exists and is tested).
#include "qsf.hpp"

#include "sinkproc.h"

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

extern "C" { // cmocka.h declares its functions without a C linkage block
#include <cmocka.h>
}
#include <new>
#include <unistd.h>

// Every allocation through operator new is counted: building rows must make
// none (qsf's own buffers are the C library's business).
static std::size_t news;
void *operator new(std::size_t n) {
    news++;
    if (void *p = std::malloc(n ? n : 1))
        return p;
    std::abort(); // the test cannot go on without memory, exceptions or not
}
void operator delete(void *p) noexcept {
    std::free(p);
}
void operator delete(void *p, std::size_t) noexcept {
    std::free(p);
}

namespace {

const char *SINK_EXE;
char dir[512];
sinkproc sink;

std::string conf_for(std::uint16_t port, const char *extra = "") {
    return "ws::addr=127.0.0.1:" + std::to_string(port) + ";" + extra;
}

int setup(void **) {
    const char *tmp = std::getenv("TMPDIR");
    std::snprintf(dir, sizeof dir, "%s/qsf-hpp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    return sinkproc_start(&sink, SINK_EXE, dir);
}

int teardown(void **) {
    sinkproc_stop(&sink);
    std::string rm = std::string("rm -rf '") + dir + "'";
    return std::system(rm.c_str()) == 0 ? 0 : -1;
}

// A line of the append file holds every column as "name":"text".
std::int64_t rows_with(const char *table, const char *needle = nullptr) {
    return sinkproc_count(&sink, table, needle);
}

const std::int64_t TS = 1767225600000000; // 2026-01-01, microseconds

/* The error-returning flavour ------------------------------------------- */

void nothrow_rows_arrive(void **) {
    qsf::nothrow_sender s;
    qsf::status st = qsf::nothrow_sender::open(conf_for(sink.port), s);
    assert_true(static_cast<bool>(st));
    assert_true(static_cast<bool>(s));
    for (std::int64_t i = 0; i < 50; i++) {
        std::string venue = i % 2 ? "kraken" : "coinbase";
        qsf::status r = s.table("nt_trades")
                            .symbol("symbol", "BTC-USD")
                            .column("id", i)
                            .column("price", 97000.5 + static_cast<double>(i))
                            .column("qty", static_cast<std::int32_t>(i * 2))
                            .column("buy", i % 3 == 0)
                            .column("venue", venue)
                            .at_micros(TS + i);
        assert_int_equal(r.code(), QSF_OK);
    }
    std::int64_t fsn = -1;
    assert_true(static_cast<bool>(s.flush(fsn)));
    assert_true(fsn >= 0);
    assert_true(static_cast<bool>(s.wait(fsn)));
    qsf::close_report rep = s.close();
    assert_true(rep.ok());
    assert_int_equal(rep.info.frames_unacked, 0);
    assert_false(static_cast<bool>(s));
    assert_int_equal(rows_with("nt_trades"), 50);
    assert_int_equal(rows_with("nt_trades", "\"id\":\"7\""), 1);
    assert_int_equal(rows_with("nt_trades", "\"venue\":\"kraken\""), 25);
}

// A bad connect string: the code, and the message names the key.
void nothrow_bad_conf_returns_code(void **) {
    qsf::nothrow_sender s;
    qsf::status st = qsf::nothrow_sender::open(conf_for(sink.port, "no_such_key=1;"), s);
    assert_int_equal(st.code(), QSF_E_CONF);
    assert_string_equal(st.name(), "QSF_E_CONF");
    assert_non_null(std::strstr(st.message(), "no_such_key"));
    assert_false(static_cast<bool>(s));
}

// A failed column cancels the row: at() returns the first failure, the next
// row is built from scratch and only it arrives.
void nothrow_failed_row_leaves_nothing(void **) {
    qsf::nothrow_sender s;
    assert_true(static_cast<bool>(qsf::nothrow_sender::open(conf_for(sink.port), s)));
    qsf::status r =
        s.table("nt_bad").column("ok", 1.0).column("", 2.0).column("later", 3.0).at_micros(TS);
    assert_int_equal(r.code(), QSF_E_VALUE);
    assert_true(r.message()[0] != '\0');
    assert_int_equal(s.buffered_rows(), 0);
    { // abandoned without at(): cancelled when it goes
        auto half = s.table("nt_bad");
        half.column("ok", 4.0);
    }
    assert_int_equal(s.buffered_rows(), 0);
    assert_int_equal(s.table("nt_bad").column("ok", 5.0).at_micros(TS + 1).code(), QSF_OK);
    std::int64_t fsn;
    assert_true(static_cast<bool>(s.flush(fsn)));
    assert_true(static_cast<bool>(s.wait(fsn)));
    assert_true(s.close().ok());
    assert_int_equal(rows_with("nt_bad"), 1);
    assert_int_equal(rows_with("nt_bad", "\"later\""), 0);
}

// A close refused inside a handler (QSF_E_STATE: it would free the handler's
// own dispatcher) frees nothing, so the handle keeps the sender, which then
// sends and closes as usual. The handle was emptied, and the sender leaked.
struct handler_close {
    qsf::nothrow_sender *s;
    std::atomic<int> code{QSF_OK};
    std::atomic<bool> held{false}, done{false};
};

void close_on_connected(void *user, const qsf_event *ev) {
    auto *h = static_cast<handler_close *>(user);
    if (ev->kind != QSF_EVENT_CONNECTED || h->done.load())
        return;
    qsf::close_report r = h->s->close();
    h->code = r.status.code();
    h->held = static_cast<bool>(*h->s);
    h->done = true;
}

void nothrow_close_refused_in_a_handler_keeps_the_sender(void **) {
    qsf::nothrow_sender s;
    assert_true(static_cast<bool>(qsf::nothrow_sender::open(conf_for(sink.port), s)));
    handler_close h;
    h.s = &s;
    assert_int_equal(qsf_set_event_handler(s.get(), close_on_connected, &h), QSF_OK);
    for (int i = 0; i < 2000 && !h.done.load(); i++) // 20 s bound: the event comes
        usleep(10000);
    assert_true(h.done.load());
    assert_int_equal(h.code.load(), QSF_E_STATE);
    assert_true(h.held.load());
    assert_true(static_cast<bool>(s));
    assert_int_equal(s.table("nt_h").column("x", 1.0).at_micros(TS).code(), QSF_OK);
    std::int64_t fsn;
    assert_true(static_cast<bool>(s.flush(fsn)));
    assert_true(static_cast<bool>(s.wait(fsn)));
    assert_true(s.close().ok());
    assert_false(static_cast<bool>(s));
    assert_int_equal(rows_with("nt_h"), 1);
}

// Waiting for a durable ack that was never asked for: the C call's code.
void nothrow_wait_durable_without_ack_is_inval(void **) {
    qsf::nothrow_sender s;
    assert_true(static_cast<bool>(qsf::nothrow_sender::open(conf_for(sink.port), s)));
    assert_int_equal(s.table("nt_w").column("x", 1.0).at_now().code(), QSF_OK);
    std::int64_t fsn;
    assert_true(static_cast<bool>(s.flush(fsn)));
    assert_int_equal(s.wait(fsn, qsf::wait_level::durable).code(), QSF_E_INVAL);
    assert_true(s.close().ok());
}

// Memory mode with no server: close reports the frames it gave up.
void nothrow_close_reports_loss(void **) {
    qsf::nothrow_sender s;
    std::string c = conf_for(sinkproc_dead_port(),
                             "initial_connect_retry=async;close_flush_timeout_millis=200;");
    assert_true(static_cast<bool>(qsf::nothrow_sender::open(c, s)));
    assert_int_equal(s.table("nt_lost").column("x", 1.0).at_micros(TS).code(), QSF_OK);
    std::int64_t fsn;
    assert_true(static_cast<bool>(s.flush(fsn)));
    qsf::close_report rep = s.close();
    assert_int_equal(rep.status.code(), QSF_E_DATA_LOSS);
    assert_int_equal(rep.info.frames_lost, 1);
    assert_int_equal(rep.info.rows_lost, 1);
}

// transaction=on: an abandoned transaction never arrives; the next one commits.
void nothrow_transaction_abandoned_then_committed(void **) {
    qsf::nothrow_sender s;
    assert_true(static_cast<bool>(
        qsf::nothrow_sender::open(conf_for(sink.port, "transaction=on;auto_flush_rows=10;"), s)));
    for (std::int64_t i = 0; i < 25; i++) // two auto-flushes stage 20, 5 buffered
        assert_int_equal(s.table("nt_txn").column("id", i).at_micros(TS + i).code(), QSF_OK);
    assert_int_equal(s.txn_rows(), 25);
    assert_int_equal(s.buffer_clear(), 25);
    assert_int_equal(s.txn_rows(), 0);
    for (std::int64_t i = 100; i < 103; i++)
        assert_int_equal(s.table("nt_txn").column("id", i).at_micros(TS + i).code(), QSF_OK);
    std::int64_t fsn = -1;
    assert_true(static_cast<bool>(s.flush(fsn)));
    assert_true(static_cast<bool>(s.wait(fsn)));
    assert_true(s.close().ok());
    assert_int_equal(rows_with("nt_txn"), 3);
    assert_int_equal(rows_with("nt_txn", "\"id\":\"7\""), 0);
}

// The tag types reach the server, and building rows allocates nothing.
void every_type_without_allocating(void **) {
    qsf::nothrow_sender s;
    assert_true(static_cast<bool>(qsf::nothrow_sender::open(conf_for(sink.port), s)));
    const double dv[] = {1.5, 2.5, 3.5, 4.5};
    const std::int32_t shape[] = {2, 2};
    const unsigned char blob[] = {0xde, 0xad};
    qsf::decimal128 d128 = {{0x39, 0x30}, 2}; // 12345, scale 2
    qsf::decimal256 d256 = {{0x01}, 0};
    std::size_t before = news;
    /* no LONG[] column: the server (and qwp-sink) refuse the whole frame */
    for (std::int64_t i = 0; i < 200; i++) {
        qsf::status st = s.table("nt_types")
                             .column("id", i)
                             .column("tn", qsf::timestamp_nanos{TS * 1000 + i})
                             .column("l256", qsf::long256{{1, 2, 3, 4}})
                             .column("gh", qsf::geohash{0x1f, 5})
                             .column("bin", qsf::binary{blob, sizeof blob})
                             .column("d64", qsf::decimal64{12345, 2})
                             .column("d128", d128)
                             .column("d256", d256)
                             .column("grid", qsf::f64_array(dv, 2, shape))
                             .column("name", std::string_view("abc"))
                             .at_micros(TS + i);
        assert_int_equal(st.code(), QSF_OK);
    }
    assert_int_equal(news - before, 0);
    std::int64_t fsn;
    assert_true(static_cast<bool>(s.flush(fsn)));
    assert_true(static_cast<bool>(s.wait(fsn)));
    assert_true(s.close().ok());
    assert_int_equal(rows_with("nt_types"), 200);
    assert_int_equal(rows_with("nt_types", "\"bin\":\"dead\""), 200);
    assert_int_equal(rows_with("nt_types", "\"d64\":\"12345\""), 200);
}

/* The throwing flavour -------------------------------------------------- */
#ifdef QSF_HPP_EXCEPTIONS

void rows_arrive_with_their_types(void **) {
    qsf::sender s(conf_for(sink.port));
    std::int64_t first = -1;
    std::size_t before = news;
    for (std::int64_t i = 0; i < 100; i++) {
        std::string_view sym = i % 2 ? "ETH-USD" : "BTC-USD";
        s.table("cpp_trades")
            .symbol("symbol", sym)
            .column("id", i)
            .column("price", 0.5 * static_cast<double>(i))
            .column("f", 1.25f)
            .column("b8", static_cast<std::int8_t>(-3))
            .column("s16", static_cast<std::int16_t>(300))
            .column("i32", 70000)
            .column("flag", true)
            .column("note", "text")
            .column("c", u'Z')
            .column("u", qsf::uuid{1, 2})
            .column("ip", qsf::ipv4{0xC0A8012A})
            .column("when", qsf::timestamp_micros{TS})
            .column("d", qsf::date{1767225600000})
            .at_micros(TS + i);
        if (i == 49)
            first = s.flush();
    }
    std::int64_t last = s.flush();
    assert_int_equal(news - before, 0);
    assert_true(first >= 0);
    assert_true(last > first);
    s.wait(last);
    qsf::close_report rep = s.close();
    assert_true(rep.ok());
    assert_int_equal(rows_with("cpp_trades"), 100);
    assert_int_equal(rows_with("cpp_trades", "\"symbol\":\"ETH-USD\""), 50);
    // integer-like values are decimal in the append file: 192.168.1.42 is 3232235818
    assert_int_equal(rows_with("cpp_trades", "\"ip\":\"3232235818\""), 100);
    assert_int_equal(rows_with("cpp_trades", "\"b8\":\"-3\",\"s16\":\"300\",\"i32\":\"70000\""),
                     100);
    assert_int_equal(rows_with("cpp_trades", "\"price\":\"1.5\""), 1);
    assert_int_equal(rows_with("cpp_trades", "\"id\":\"99\""), 1);
}

// A system_clock time point as the designated timestamp and as a column.
void chrono_time_points(void **) {
    qsf::sender s(conf_for(sink.port));
    auto t = std::chrono::system_clock::time_point(std::chrono::microseconds(TS));
    s.table("cpp_chrono")
        .column("at_us", std::chrono::time_point_cast<std::chrono::microseconds>(t))
        .at(t);
    s.wait(s.flush());
    assert_true(s.close().ok());
    assert_int_equal(rows_with("cpp_chrono"), 1);
}

// A bad connect string throws qsf::error with the code, the flags and a
// message that names the key.
void bad_conf_throws_with_key(void **) {
    try {
        qsf::sender s(conf_for(sink.port, "no_such_key=1;"));
        fail_msg("qsf::sender accepted an unknown key");
    } catch (const qsf::error &e) {
        assert_int_equal(e.code(), QSF_E_CONF);
        assert_string_equal(e.name(), "QSF_E_CONF");
        assert_false(e.retriable());
        assert_non_null(std::strstr(e.what(), "no_such_key"));
        assert_non_null(std::strstr(e.what(), "QSF_E_CONF: "));
    }
}

void failed_column_throws_and_cancels(void **) {
    qsf::sender s(conf_for(sink.port));
    try {
        s.table("cpp_bad").column("ok", 1.0).column("", 2.0).at_micros(TS);
        fail_msg("an empty column name was accepted");
    } catch (const qsf::error &e) {
        assert_int_equal(e.code(), QSF_E_VALUE);
    }
    assert_int_equal(s.buffered_rows(), 0);
    s.table("cpp_bad").column("ok", 3.0).at_micros(TS);
    s.wait(s.flush());
    assert_true(s.close().ok());
    assert_int_equal(rows_with("cpp_bad"), 1);
}

// Move-only: a moved-from sender is empty, the moved-to one works.
void moves(void **) {
    qsf::sender a(conf_for(sink.port));
    qsf::sender b(std::move(a));
    assert_false(static_cast<bool>(a));
    assert_true(static_cast<bool>(b));
    b.table("cpp_moved").column("x", 1.0).at_micros(TS);
    b.wait(b.flush());
    assert_true(b.close().ok());
    assert_int_equal(rows_with("cpp_moved"), 1);
}

void close_error_carries_report(void **) {
    qsf::sender s(conf_for(sinkproc_dead_port(),
                           "initial_connect_retry=async;close_flush_timeout_millis=200;"));
    s.table("cpp_lost").column("x", 1.0).at_micros(TS);
    s.flush();
    try {
        (void) s.close();
        fail_msg("close reported a clean close with nothing acknowledged");
    } catch (const qsf::close_error &e) {
        assert_int_equal(e.code(), QSF_E_DATA_LOSS);
        assert_int_equal(e.report().info.frames_lost, 1);
    }
    assert_false(static_cast<bool>(s));
}
#endif

} // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: test_qsf_hpp QWP_SINK\n");
        return 2;
    }
    SINK_EXE = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothrow_rows_arrive),
        cmocka_unit_test(nothrow_bad_conf_returns_code),
        cmocka_unit_test(nothrow_failed_row_leaves_nothing),
        cmocka_unit_test(nothrow_wait_durable_without_ack_is_inval),
        cmocka_unit_test(nothrow_close_reports_loss),
        cmocka_unit_test(nothrow_close_refused_in_a_handler_keeps_the_sender),
        cmocka_unit_test(nothrow_transaction_abandoned_then_committed),
        cmocka_unit_test(every_type_without_allocating),
#ifdef QSF_HPP_EXCEPTIONS
        cmocka_unit_test(rows_arrive_with_their_types),
        cmocka_unit_test(chrono_time_points),
        cmocka_unit_test(bad_conf_throws_with_key),
        cmocka_unit_test(failed_column_throws_and_cancels),
        cmocka_unit_test(moves),
        cmocka_unit_test(close_error_carries_report),
#endif
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
