/*
 * qsf.hpp - a header-only C++17 wrapper over qsf.h.
 *
 *   qsf::sender s("ws::addr=localhost:9000;sf_dir=qdb-sf;");
 *   s.table("trades").symbol("symbol", "BTC-USD").column("price", 97123.5).at(ts);
 *   s.wait(s.flush());
 *   qsf::close_report r = s.close();
 *
 * Two flavours over the same C calls:
 *  - qsf::sender throws qsf::error (a std::runtime_error carrying the code,
 *    the flags and qsf's message) for every failed call;
 *  - qsf::nothrow_sender returns a qsf::status instead, for code built without
 *    exceptions (it is all there is of this header under -fno-exceptions).
 * Both are move-only; the destructor closes the sender (call close() to learn
 * how that went), except where qsf_close is refused (inside an error, event
 * or log handler: see qsf_close in qsf.h): there it leaves the sender open
 * and running, so destroy or close() a sender on an application thread.
 * Names and values are std::string_view: qsf copies what it keeps, nothing
 * here allocates per row, and a qsf::error allocates only its message. The
 * rules of qsf.h hold unchanged (threads, ownership, which calls may block):
 * each method says which C call it makes.
 *
 * A row is sender.table(name), then columns, then at(...) or at_now(). A row
 * builder that goes away without at() (an exception, an early return) cancels
 * its row (qsf_row_cancel), so the sender is never left with half a row; so
 * does a failed column call. column() picks the QuestDB type from the C++
 * type: bool BOOLEAN; int8_t BYTE; int16_t SHORT; int32_t INT; int64_t LONG;
 * float FLOAT; double DOUBLE; char16_t CHAR; std::string_view / const char *
 * / std::string VARCHAR; a std::chrono::system_clock time point TIMESTAMP
 * (microseconds or coarser) or TIMESTAMP_NANOS (finer); and the tag types
 * below for the rest. Unsigned integers and plain char do not compile: say
 * which signed type (or char16_t) you mean.
 *
 * Columns in: qsf::chunk holds columns given whole (typed arrays, or Arrow
 * arrays and record batches), sender::flush(chunk&) publishes them, and
 * sender::send_arrow_stream() publishes an ArrowArrayStream batch by batch.
 */
#ifndef QSF_HPP
#define QSF_HPP

/* Below C++17 the rest would fail in std::string_view and if constexpr; the
 * #else keeps the compiler to this one error. */
#if __cplusplus < 201703L
#error "qsf.hpp needs C++17 or later (-std=c++17); C++14 and older can use qsf.h"
#else

#include "qsf.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <stdexcept>
#include <string>
#define QSF_HPP_EXCEPTIONS 1
#endif

namespace qsf {

/* ------------------------------------------------------------------------- */
/* Column values that a C++ type alone does not name                         */
/* ------------------------------------------------------------------------- */

struct timestamp_micros {
    std::int64_t micros;
}; /* TIMESTAMP from a raw count */
struct timestamp_nanos {
    std::int64_t nanos;
}; /* TIMESTAMP_NANOS */
struct date {
    std::int64_t millis;
}; /* DATE (ms since the epoch) */
struct uuid {
    std::uint64_t lo, hi;
}; /* lo: least significant 64 bits */
struct long256 {
    std::uint64_t words[4];
}; /* least significant first */
struct geohash {
    std::uint64_t bits;
    int precision_bits;
};
struct ipv4 {
    std::uint32_t host_order;
}; /* 192.168.1.42 is 0xC0A8012A */
struct binary {
    const void *data;
    std::size_t size;
};
struct decimal64 {
    std::int64_t unscaled;
    int scale;
};
struct decimal128 {
    std::uint8_t unscaled_le[16];
    int scale;
};
struct decimal256 {
    std::uint8_t unscaled_le[32];
    int scale;
};

/* An N-dimensional array, row-major, borrowed for the call: values and (for
 * rank > 1) shape stay the caller's. The two-argument form is one dimension. */
template <class T> struct array {
    const T *values;
    int rank;
    const std::int32_t *shape; /* rank entries; unused when rank is 1 */
    std::int32_t length;       /* rank 1: the element count */
    array(const T *v, std::int32_t n) : values(v), rank(1), shape(nullptr), length(n) {}
    array(const T *v, int r, const std::int32_t *sh) : values(v), rank(r), shape(sh), length(0) {}
};
using f64_array = array<double>;
using i64_array = array<std::int64_t>;

enum class wait_level { ok = QSF_WAIT_OK, durable = QSF_WAIT_DURABLE };

/* ------------------------------------------------------------------------- */
/* Outcomes                                                                  */
/* ------------------------------------------------------------------------- */

/* The outcome of a call: a qsf_errinfo by value (no allocation). A status
 * returned and ignored is a compiler warning. */
class [[nodiscard]] status {
  public:
    status() noexcept {
        info_.code = QSF_OK;
        info_.flags = 0;
        info_.sys_errno = 0;
        info_.msg[0] = '\0';
    }
    explicit operator bool() const noexcept {
        return info_.code == QSF_OK;
    }
    int code() const noexcept {
        return info_.code;
    }
    unsigned flags() const noexcept {
        return info_.flags;
    }
    int sys_errno() const noexcept {
        return info_.sys_errno;
    }
    bool retriable() const noexcept {
        return (info_.flags & QSF_ERRF_RETRIABLE) != 0;
    }
    bool in_doubt() const noexcept {
        return (info_.flags & QSF_ERRF_IN_DOUBT) != 0;
    }
    bool fatal() const noexcept {
        return (info_.flags & QSF_ERRF_FATAL) != 0;
    }
    const char *name() const noexcept { /* "QSF_E_CONF" */
        return qsf_err_name(info_.code);
    }
    const char *message() const noexcept { /* NUL-terminated, "" when OK */
        return info_.code == QSF_OK ? "" : info_.msg;
    }
    qsf_errinfo *c_info() noexcept { /* for the C calls that fill it */
        return &info_;
    }
    /* Records rc; qsf fills the message for its own failures, this keeps
     * an OK status clean when a C call returned QSF_OK without touching it. */
    status &set(int rc) noexcept {
        if (rc == QSF_OK) {
            info_.code = QSF_OK;
            info_.flags = 0;
            info_.sys_errno = 0;
            info_.msg[0] = '\0';
        }
        info_.code = rc;
        return *this;
    }

  private:
    qsf_errinfo info_;
};

/* What close found (qsf_close_report): the status close returned and the
 * counts behind it. ok() only when everything published was acknowledged and
 * nothing was dropped or lost. */
struct close_report {
    qsf::status status;
    qsf_close_info info;
    bool ok() const noexcept {
        return static_cast<bool>(status);
    }
};

#ifdef QSF_HPP_EXCEPTIONS
/* A failed call: code(), flags(), sys_errno() and name() as qsf gave them;
 * what() is "QSF_E_NAME: message". */
class error : public std::runtime_error {
  public:
    explicit error(const status &st)
        : std::runtime_error(std::string(st.name()) + ": " + st.message()), code_(st.code()),
          flags_(st.flags()), sys_errno_(st.sys_errno()) {}
    int code() const noexcept {
        return code_;
    }
    unsigned flags() const noexcept {
        return flags_;
    }
    int sys_errno() const noexcept {
        return sys_errno_;
    }
    const char *name() const noexcept {
        return qsf_err_name(code_);
    }
    bool retriable() const noexcept {
        return (flags_ & QSF_ERRF_RETRIABLE) != 0;
    }
    bool in_doubt() const noexcept {
        return (flags_ & QSF_ERRF_IN_DOUBT) != 0;
    }
    bool fatal() const noexcept {
        return (flags_ & QSF_ERRF_FATAL) != 0;
    }

  private:
    int code_;
    unsigned flags_;
    int sys_errno_;
};

/* close() found something other than a clean close; report() has the counts.
 * The sender is closed all the same. */
class close_error : public error {
  public:
    explicit close_error(const close_report &r) : error(r.status), report_(r) {}
    const close_report &report() const noexcept {
        return report_;
    }

  private:
    close_report report_;
};
#endif

/* ------------------------------------------------------------------------- */
/* Column calls, one overload per type                                       */
/* ------------------------------------------------------------------------- */

namespace detail {

inline int put(qsf_sender *s, std::string_view c, bool v, qsf_errinfo *e) noexcept {
    return qsf_col_bool(s, c.data(), c.size(), v, e);
}
inline int put(qsf_sender *s, std::string_view c, float v, qsf_errinfo *e) noexcept {
    return qsf_col_f32(s, c.data(), c.size(), v, e);
}
inline int put(qsf_sender *s, std::string_view c, double v, qsf_errinfo *e) noexcept {
    return qsf_col_f64(s, c.data(), c.size(), v, e);
}
inline int put(qsf_sender *s, std::string_view c, char16_t v, qsf_errinfo *e) noexcept {
    return qsf_col_char(s, c.data(), c.size(), static_cast<std::uint16_t>(v), e);
}
inline int put(qsf_sender *s, std::string_view c, std::string_view v, qsf_errinfo *e) noexcept {
    return qsf_col_varchar(s, c.data(), c.size(), v.data(), v.size(), e);
}
inline int put(qsf_sender *s, std::string_view c, const char *v, qsf_errinfo *e) noexcept {
    return put(s, c, std::string_view(v ? v : ""), e);
}
inline int put(qsf_sender *s, std::string_view c, timestamp_micros v, qsf_errinfo *e) noexcept {
    return qsf_col_ts_micros(s, c.data(), c.size(), v.micros, e);
}
inline int put(qsf_sender *s, std::string_view c, timestamp_nanos v, qsf_errinfo *e) noexcept {
    return qsf_col_ts_nanos(s, c.data(), c.size(), v.nanos, e);
}
inline int put(qsf_sender *s, std::string_view c, date v, qsf_errinfo *e) noexcept {
    return qsf_col_date(s, c.data(), c.size(), v.millis, e);
}
inline int put(qsf_sender *s, std::string_view c, uuid v, qsf_errinfo *e) noexcept {
    return qsf_col_uuid(s, c.data(), c.size(), v.lo, v.hi, e);
}
inline int put(qsf_sender *s, std::string_view c, const long256 &v, qsf_errinfo *e) noexcept {
    return qsf_col_long256(s, c.data(), c.size(), v.words, e);
}
inline int put(qsf_sender *s, std::string_view c, geohash v, qsf_errinfo *e) noexcept {
    return qsf_col_geohash(s, c.data(), c.size(), v.bits, v.precision_bits, e);
}
inline int put(qsf_sender *s, std::string_view c, ipv4 v, qsf_errinfo *e) noexcept {
    return qsf_col_ipv4(s, c.data(), c.size(), v.host_order, e);
}
inline int put(qsf_sender *s, std::string_view c, binary v, qsf_errinfo *e) noexcept {
    return qsf_col_binary(s, c.data(), c.size(), v.data, v.size, e);
}
inline int put(qsf_sender *s, std::string_view c, decimal64 v, qsf_errinfo *e) noexcept {
    return qsf_col_decimal64(s, c.data(), c.size(), v.unscaled, v.scale, e);
}
inline int put(qsf_sender *s, std::string_view c, const decimal128 &v, qsf_errinfo *e) noexcept {
    return qsf_col_decimal128(s, c.data(), c.size(), v.unscaled_le, v.scale, e);
}
inline int put(qsf_sender *s, std::string_view c, const decimal256 &v, qsf_errinfo *e) noexcept {
    return qsf_col_decimal256(s, c.data(), c.size(), v.unscaled_le, v.scale, e);
}
inline int put(qsf_sender *s, std::string_view c, const f64_array &v, qsf_errinfo *e) noexcept {
    return qsf_col_f64_array(s, c.data(), c.size(), v.rank, v.rank == 1 ? &v.length : v.shape,
                             v.values, e);
}
inline int put(qsf_sender *s, std::string_view c, const i64_array &v, qsf_errinfo *e) noexcept {
    return qsf_col_i64_array(s, c.data(), c.size(), v.rank, v.rank == 1 ? &v.length : v.shape,
                             v.values, e);
}

/* Signed integers by width: BYTE, SHORT, INT, LONG. */
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                        !std::is_same_v<T, char16_t>,
                                    int> = 0>
int put(qsf_sender *s, std::string_view c, T v, qsf_errinfo *e) noexcept {
    static_assert(std::is_signed_v<T> && !std::is_same_v<T, char>,
                  "qsf: unsigned integers and plain char have no QuestDB column type; "
                  "convert to a signed type (or char16_t for CHAR)");
    if constexpr (sizeof(T) == 1)
        return qsf_col_i8(s, c.data(), c.size(), static_cast<std::int8_t>(v), e);
    else if constexpr (sizeof(T) == 2)
        return qsf_col_i16(s, c.data(), c.size(), static_cast<std::int16_t>(v), e);
    else if constexpr (sizeof(T) == 4)
        return qsf_col_i32(s, c.data(), c.size(), static_cast<std::int32_t>(v), e);
    else
        return qsf_col_i64(s, c.data(), c.size(), static_cast<std::int64_t>(v), e);
}

/* Whether a time point's tick is finer than a microsecond. */
template <class D> constexpr bool finer_than_micros() {
    return std::ratio_less_v<typename D::period, std::micro>;
}

/* A system_clock time point: TIMESTAMP_NANOS when its tick is finer than a
 * microsecond, else TIMESTAMP. */
template <class D>
int put(qsf_sender *s, std::string_view c, std::chrono::time_point<std::chrono::system_clock, D> t,
        qsf_errinfo *e) noexcept {
    using namespace std::chrono;
    if constexpr (finer_than_micros<D>())
        return put(s, c, timestamp_nanos{floor<nanoseconds>(t.time_since_epoch()).count()}, e);
    else
        return put(s, c,
                   timestamp_micros{duration_cast<microseconds>(t.time_since_epoch()).count()}, e);
}

template <class D>
int at(qsf_sender *s, std::chrono::time_point<std::chrono::system_clock, D> t,
       qsf_errinfo *e) noexcept {
    using namespace std::chrono;
    if constexpr (finer_than_micros<D>())
        return qsf_at_nanos(s, floor<nanoseconds>(t.time_since_epoch()).count(), e);
    else
        return qsf_at_micros(s, duration_cast<microseconds>(t.time_since_epoch()).count(), e);
}

/* What both flavours share: the handle, moves, and the close on destruction. */
class handle {
  public:
    handle() noexcept = default;
    explicit handle(qsf_sender *s) noexcept : s_(s) {}
    handle(handle &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    handle &operator=(handle &&o) noexcept {
        if (this != &o) {
            qsf_close(s_, nullptr);
            s_ = std::exchange(o.s_, nullptr);
        }
        return *this;
    }
    handle(const handle &) = delete;
    handle &operator=(const handle &) = delete;
    ~handle() {
        qsf_close(s_, nullptr); /* the outcome is close()'s to report */
    }
    /* The C handle, for the calls this header does not wrap. */
    qsf_sender *get() const noexcept {
        return s_;
    }
    explicit operator bool() const noexcept {
        return s_ != nullptr;
    }
    /* Highest FSN published / acknowledged, -1 if none. Any thread. */
    std::int64_t published_fsn() const noexcept {
        return qsf_published_fsn(s_);
    }
    std::int64_t acked_fsn() const noexcept {
        return qsf_acked_fsn(s_);
    }
    std::size_t buffered_rows() const noexcept {
        return qsf_buffered_rows(s_);
    }
    /* Drops the buffered rows and, with transaction=on, abandons the open
     * transaction (never delivered); returns the rows given up. Producer thread. */
    std::size_t buffer_clear() noexcept {
        return qsf_buffer_clear(s_);
    }
    /* With transaction=on: the rows of the open transaction (staged and buffered). */
    std::uint64_t txn_rows() const noexcept {
        return qsf_txn_rows(s_);
    }
    qsf_stats stats() const noexcept {
        qsf_stats st;
        qsf_stats_get(s_, &st);
        return st;
    }

  protected:
    /* qsf_close_report; the handle is empty afterwards unless the close was
     * refused (QSF_E_STATE: called from an error or event handler of any
     * sender, the log handler or a callback of the sender's stream, or in a
     * child of fork()), which frees nothing: the handle keeps the sender, to
     * be closed once the handler has returned (a child's second close is
     * refused again and changes nothing). */
    close_report close_now() noexcept {
        close_report r;
        std::memset(&r.info, 0, sizeof r.info);
        r.info.struct_size = sizeof r.info;
        r.status.set(qsf_close_report(s_, &r.info, r.status.c_info()));
        if (r.status.code() != QSF_E_STATE)
            s_ = nullptr;
        return r;
    }
    qsf_sender *s_ = nullptr;
};

} // namespace detail

/* ------------------------------------------------------------------------- */
/* Columns in: chunks and Apache Arrow                                       */
/* ------------------------------------------------------------------------- */

/* A chunk of one table's rows given column by column (qsf_chunk_*, the
 * Arrow C Data Interface import): move-only, freed on destruction. Buffers are
 * borrowed, as in qsf.h: every array given must stay valid and unchanged until
 * the chunk is flushed (sender::flush(chunk&) has returned), cleared or
 * destroyed. The column calls return a qsf::status in both flavours (wrap them
 * in qsf::check() to throw); arguments are those of the C calls, in their
 * order: values, validity bitmap (nullptr: no null), offset, rows. */
class chunk {
  public:
    chunk() noexcept = default;
    /* qsf_chunk_new: on failure *out stays empty and the status says why */
    static status open(std::string_view table, chunk &out) noexcept {
        status st;
        qsf_chunk *c = nullptr;
        if (st.set(qsf_chunk_new(table.data(), table.size(), &c, st.c_info())))
            out = chunk(c);
        return st;
    }
#ifdef QSF_HPP_EXCEPTIONS
    /* qsf_chunk_new, throwing qsf::error */
    explicit chunk(std::string_view table);
#endif
    chunk(chunk &&o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
    chunk &operator=(chunk &&o) noexcept {
        if (this != &o) {
            qsf_chunk_free(c_);
            c_ = std::exchange(o.c_, nullptr);
        }
        return *this;
    }
    chunk(const chunk &) = delete;
    chunk &operator=(const chunk &) = delete;
    ~chunk() {
        qsf_chunk_free(c_);
    }
    /* The C handle, for the calls this header does not wrap. */
    qsf_chunk *get() const noexcept {
        return c_;
    }
    explicit operator bool() const noexcept {
        return c_ != nullptr;
    }
    /* qsf_chunk_rows */
    std::size_t rows() const noexcept {
        return qsf_chunk_rows(c_);
    }
    /* qsf_chunk_clear: the buffers go back to the caller; the table and the
     * Arrow types asked for stay */
    void clear() noexcept {
        qsf_chunk_clear(c_);
    }

    /* Fixed-width columns by the element type: int8_t..int64_t BYTE..LONG,
     * uint8_t..uint64_t widened (qsf_chunk_u*), float FLOAT, double DOUBLE,
     * bool BOOLEAN (one byte per value, qsf_chunk_bool_u8), char16_t CHAR. */
    template <class T>
    status column(std::string_view col, const T *values, const std::uint8_t *validity,
                  std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(put(col, values, validity, offset, rows, st.c_info()));
    }
    /* qsf_chunk_bool: an Arrow boolean bitmap */
    status bool_bits(std::string_view col, const std::uint8_t *bits, const std::uint8_t *validity,
                     std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(
            qsf_chunk_bool(c_, col.data(), col.size(), bits, validity, offset, rows, st.c_info()));
    }
    /* qsf_chunk_timestamp, unit QSF_UNIT_* */
    status timestamp(std::string_view col, const std::int64_t *values, int unit,
                     const std::uint8_t *validity, std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_timestamp(c_, col.data(), col.size(), values, unit, validity,
                                          offset, rows, st.c_info()));
    }
    /* qsf_chunk_varchar / qsf_chunk_varchar64 (Arrow utf8 / large_utf8) */
    status varchar(std::string_view col, const std::int32_t *offsets, const char *data,
                   const std::uint8_t *validity, std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_varchar(c_, col.data(), col.size(), offsets, data, validity, offset,
                                        rows, st.c_info()));
    }
    status varchar(std::string_view col, const std::int64_t *offsets, const char *data,
                   const std::uint8_t *validity, std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_varchar64(c_, col.data(), col.size(), offsets, data, validity,
                                          offset, rows, st.c_info()));
    }
    /* qsf_chunk_symbol / qsf_chunk_symbol64 */
    status symbol(std::string_view col, const std::int32_t *offsets, const char *data,
                  const std::uint8_t *validity, std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_symbol(c_, col.data(), col.size(), offsets, data, validity, offset,
                                       rows, st.c_info()));
    }
    status symbol(std::string_view col, const std::int64_t *offsets, const char *data,
                  const std::uint8_t *validity, std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_symbol64(c_, col.data(), col.size(), offsets, data, validity,
                                         offset, rows, st.c_info()));
    }
    /* qsf_chunk_symbol_dict: int8_t, int16_t or int32_t codes into a
     * dictionary of dict_len strings */
    template <class Code>
    status symbol_dict(std::string_view col, const Code *codes, const std::int32_t *dict_offsets,
                       const char *dict_data, std::size_t dict_len, const std::uint8_t *validity,
                       std::size_t offset, std::size_t rows) noexcept {
        static_assert(std::is_same_v<Code, std::int8_t> || std::is_same_v<Code, std::int16_t> ||
                          std::is_same_v<Code, std::int32_t>,
                      "codes are int8_t, int16_t or int32_t");
        status st;
        return st.set(qsf_chunk_symbol_dict(c_, col.data(), col.size(), codes,
                                            static_cast<int>(sizeof(Code)), dict_offsets, dict_data,
                                            dict_len, validity, offset, rows, st.c_info()));
    }
    /* qsf_chunk_f64_list / qsf_chunk_f64_tensor (DOUBLE arrays) */
    status f64_list(std::string_view col, const std::int32_t *list_offsets, const double *values,
                    const std::uint8_t *validity, std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_f64_list(c_, col.data(), col.size(), list_offsets, values, validity,
                                         offset, rows, st.c_info()));
    }
    status f64_tensor(std::string_view col, int rank, const std::int32_t *shape,
                      const double *values, const std::uint8_t *validity, std::size_t offset,
                      std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_f64_tensor(c_, col.data(), col.size(), rank, shape, values,
                                           validity, offset, rows, st.c_info()));
    }
    /* qsf_chunk_at / qsf_chunk_at_now: the designated timestamp */
    status at(const std::int64_t *values, int unit, std::size_t offset, std::size_t rows) noexcept {
        status st;
        return st.set(qsf_chunk_at(c_, values, unit, offset, rows, st.c_info()));
    }
    status at_now() noexcept {
        status st;
        return st.set(qsf_chunk_at_now(c_, st.c_info()));
    }

    /* qsf_chunk_arrow_type: column `col` becomes QSF_TYPE_* in later Arrow calls */
    status arrow_type(std::string_view col, int qsf_type) noexcept {
        status st;
        return st.set(qsf_chunk_arrow_type(c_, col.data(), col.size(), qsf_type, st.c_info()));
    }
    /* qsf_chunk_arrow_column: the array as column `col` (empty: schema.name) */
    status arrow_column(const ArrowSchema &schema, const ArrowArray &array,
                        std::string_view col = {}) noexcept {
        status st;
        return st.set(qsf_chunk_arrow_column(c_, col.empty() ? nullptr : col.data(), col.size(),
                                             &schema, &array, st.c_info()));
    }
    /* qsf_chunk_arrow_batch: a record batch (struct array), ts_col the
     * designated timestamp (nullptr: none) */
    status arrow_batch(const ArrowSchema &schema, const ArrowArray &array,
                       const char *ts_col = nullptr) noexcept {
        status st;
        return st.set(qsf_chunk_arrow_batch(c_, &schema, &array, ts_col, st.c_info()));
    }

  private:
    explicit chunk(qsf_chunk *c) noexcept : c_(c) {}
    int put(std::string_view c, const std::int8_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_i8(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const std::int16_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_i16(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const std::int32_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_i32(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const std::int64_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_i64(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const std::uint8_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_u8(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const std::uint16_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_u16(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const std::uint32_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_u32(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const std::uint64_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_u64(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const float *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_f32(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const double *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_f64(c_, c.data(), c.size(), v, va, o, n, e);
    }
    int put(std::string_view c, const bool *v, const std::uint8_t *va, std::size_t o, std::size_t n,
            qsf_errinfo *e) noexcept {
        static_assert(sizeof(bool) == 1, "qsf_chunk_bool_u8 reads one byte per value");
        return qsf_chunk_bool_u8(c_, c.data(), c.size(), reinterpret_cast<const std::uint8_t *>(v),
                                 va, o, n, e);
    }
    int put(std::string_view c, const char16_t *v, const std::uint8_t *va, std::size_t o,
            std::size_t n, qsf_errinfo *e) noexcept {
        return qsf_chunk_char(c_, c.data(), c.size(), reinterpret_cast<const std::uint16_t *>(v),
                              va, o, n, e);
    }
    qsf_chunk *c_ = nullptr;
};

/* ------------------------------------------------------------------------- */
/* The error-returning flavour                                               */
/* ------------------------------------------------------------------------- */

/* A row being built that keeps the first failure: later calls do nothing and
 * at() / at_now() return it. Obtained from nothrow_sender::table(). */
class nothrow_row {
  public:
    nothrow_row(nothrow_row &&o) noexcept
        : s_(std::exchange(o.s_, nullptr)), st_(o.st_), open_(std::exchange(o.open_, false)),
          failed_(o.failed_) {}
    nothrow_row(const nothrow_row &) = delete;
    nothrow_row &operator=(const nothrow_row &) = delete;
    nothrow_row &operator=(nothrow_row &&) = delete;
    ~nothrow_row() {
        if (open_)
            qsf_row_cancel(s_);
    }
    /* qsf_symbol */
    nothrow_row &symbol(std::string_view col, std::string_view value) noexcept {
        if (!failed_)
            check(qsf_symbol(s_, col.data(), col.size(), value.data(), value.size(), st_.c_info()));
        return *this;
    }
    /* qsf_col_* for T (the table at the top of this header) */
    template <class T> nothrow_row &column(std::string_view col, const T &value) noexcept {
        if (!failed_)
            check(detail::put(s_, col, value, st_.c_info()));
        return *this;
    }
    /* qsf_at_micros / qsf_at_nanos from a system_clock time point */
    template <class D>
    qsf::status at(std::chrono::time_point<std::chrono::system_clock, D> t) noexcept {
        return failed_ ? st_ : finish(detail::at(s_, t, st_.c_info()));
    }
    qsf::status at_micros(std::int64_t micros) noexcept {
        return failed_ ? st_ : finish(qsf_at_micros(s_, micros, st_.c_info()));
    }
    qsf::status at_nanos(std::int64_t nanos) noexcept {
        return failed_ ? st_ : finish(qsf_at_nanos(s_, nanos, st_.c_info()));
    }
    qsf::status at_now() noexcept {
        return failed_ ? st_ : finish(qsf_at_now(s_, st_.c_info()));
    }
    /* The first failure so far (OK while there is none). */
    const qsf::status &status() const noexcept {
        return st_;
    }

  private:
    friend class nothrow_sender;
    nothrow_row(qsf_sender *s, std::string_view table) noexcept : s_(s) {
        open_ = true;
        check(qsf_table(s_, table.data(), table.size(), st_.c_info()));
    }
    void check(int rc) noexcept {
        if (rc == QSF_OK)
            return;
        st_.set(rc);
        qsf_row_cancel(s_);
        open_ = false;
        failed_ = true;
    }
    qsf::status finish(int rc) noexcept {
        open_ = false;
        if (rc != QSF_OK) {
            qsf_row_cancel(s_); /* a complete row stays: only an open one goes */
            failed_ = true;
        }
        st_.set(rc);
        return st_;
    }
    qsf_sender *s_;
    qsf::status st_;
    bool open_ = false;
    bool failed_ = false;
};

/* A sender whose calls return a qsf::status (or fill one) and never throw. */
class nothrow_sender : public detail::handle {
  public:
    nothrow_sender() noexcept = default;
    /* qsf_sender_new: on failure *out stays empty and the status says why. */
    static status open(std::string_view conf, nothrow_sender &out) noexcept {
        status st;
        qsf_sender *s = nullptr;
        if (st.set(qsf_sender_new(conf.data(), conf.size(), &s, st.c_info())))
            out = nothrow_sender(s);
        return st;
    }
    /* qsf_sender_from_env (QDB_CLIENT_CONF) */
    static status from_env(nothrow_sender &out) noexcept {
        status st;
        qsf_sender *s = nullptr;
        if (st.set(qsf_sender_from_env(&s, st.c_info())))
            out = nothrow_sender(s);
        return st;
    }
    /* qsf_table: starts a row */
    nothrow_row table(std::string_view name) noexcept {
        return nothrow_row(s_, name);
    }
    /* qsf_flush: *fsn gets the FSN of the last frame published */
    status flush(std::int64_t &fsn) noexcept {
        status st;
        return st.set(qsf_flush(s_, &fsn, st.c_info()));
    }
    /* qsf_wait */
    status wait(std::int64_t fsn, wait_level level = wait_level::ok,
                std::chrono::milliseconds no_progress = std::chrono::seconds(30)) noexcept {
        status st;
        return st.set(qsf_wait(s_, fsn, static_cast<int>(level), no_progress.count(), st.c_info()));
    }
    /* qsf_flush_chunk: publishes the chunk (unchanged: clear it to reuse) */
    status flush(chunk &c, std::int64_t &fsn) noexcept {
        status st;
        return st.set(qsf_flush_chunk(s_, c.get(), &fsn, st.c_info()));
    }
    /* qsf_send_arrow_stream: every batch of the stream into `table`; rows
     * counts the rows published (also when a later batch failed) */
    status send_arrow_stream(std::string_view table, ArrowArrayStream &stream, const char *ts_col,
                             std::uint64_t &rows) noexcept {
        status st;
        return st.set(qsf_send_arrow_stream(s_, table.data(), table.size(), &stream, ts_col, &rows,
                                            st.c_info()));
    }
    /* qsf_send_arrow_stream_typed: the same, with columns asked to become
     * the QuestDB types of types[0..n_types) (e.g. {"venue", QSF_TYPE_SYMBOL}) */
    status send_arrow_stream(std::string_view table, ArrowArrayStream &stream, const char *ts_col,
                             const qsf_arrow_col_type *types, std::size_t n_types,
                             std::uint64_t &rows) noexcept {
        status st;
        return st.set(qsf_send_arrow_stream_typed(s_, table.data(), table.size(), &stream, ts_col,
                                                  types, n_types, &rows, st.c_info()));
    }
    /* qsf_close_report: the sender is closed afterwards whatever it says,
     * except when the close was refused (QSF_E_STATE, see close_now) */
    close_report close() noexcept {
        return close_now();
    }

  private:
    explicit nothrow_sender(qsf_sender *s) noexcept : detail::handle(s) {}
};

#ifdef QSF_HPP_EXCEPTIONS
/* ------------------------------------------------------------------------- */
/* The throwing flavour                                                      */
/* ------------------------------------------------------------------------- */

/* A row being built; every call throws qsf::error on failure (the row is
 * cancelled first). Obtained from sender::table(). */
class row {
  public:
    row(row &&o) noexcept
        : s_(std::exchange(o.s_, nullptr)), open_(std::exchange(o.open_, false)) {}
    row(const row &) = delete;
    row &operator=(const row &) = delete;
    row &operator=(row &&) = delete;
    ~row() {
        if (open_)
            qsf_row_cancel(s_);
    }
    /* qsf_symbol */
    row &symbol(std::string_view col, std::string_view value) {
        status st;
        check(st.set(
            qsf_symbol(s_, col.data(), col.size(), value.data(), value.size(), st.c_info())));
        return *this;
    }
    /* qsf_col_* for T (the table at the top of this header) */
    template <class T> row &column(std::string_view col, const T &value) {
        status st;
        check(st.set(detail::put(s_, col, value, st.c_info())));
        return *this;
    }
    /* qsf_at_micros / qsf_at_nanos from a system_clock time point */
    template <class D> void at(std::chrono::time_point<std::chrono::system_clock, D> t) {
        status st;
        finish(st.set(detail::at(s_, t, st.c_info())));
    }
    void at_micros(std::int64_t micros) {
        status st;
        finish(st.set(qsf_at_micros(s_, micros, st.c_info())));
    }
    void at_nanos(std::int64_t nanos) {
        status st;
        finish(st.set(qsf_at_nanos(s_, nanos, st.c_info())));
    }
    void at_now() {
        status st;
        finish(st.set(qsf_at_now(s_, st.c_info())));
    }

  private:
    friend class sender;
    row(qsf_sender *s, std::string_view table) : s_(s) {
        status st;
        open_ = true;
        check(st.set(qsf_table(s_, table.data(), table.size(), st.c_info())));
    }
    void check(const status &st) {
        if (st)
            return;
        qsf_row_cancel(s_);
        open_ = false;
        throw error(st);
    }
    void finish(const status &st) {
        open_ = false;
        if (st)
            return;
        qsf_row_cancel(s_); /* a complete row stays: only an open one goes */
        throw error(st);
    }
    qsf_sender *s_;
    bool open_ = false;
};

/* A sender whose calls throw qsf::error on failure. */
class sender : public detail::handle {
  public:
    sender() noexcept = default;
    /* qsf_sender_new */
    explicit sender(std::string_view conf) {
        status st;
        if (!st.set(qsf_sender_new(conf.data(), conf.size(), &s_, st.c_info())))
            throw error(st);
    }
    /* qsf_sender_from_env (QDB_CLIENT_CONF) */
    static sender from_env() {
        status st;
        qsf_sender *s = nullptr;
        if (!st.set(qsf_sender_from_env(&s, st.c_info())))
            throw error(st);
        sender out;
        out.s_ = s;
        return out;
    }
    /* qsf_table: starts a row */
    row table(std::string_view name) {
        return row(s_, name);
    }
    /* qsf_flush: returns the FSN of the last frame published */
    std::int64_t flush() {
        status st;
        std::int64_t fsn = -1;
        if (!st.set(qsf_flush(s_, &fsn, st.c_info())))
            throw error(st);
        return fsn;
    }
    /* qsf_wait */
    void wait(std::int64_t fsn, wait_level level = wait_level::ok,
              std::chrono::milliseconds no_progress = std::chrono::seconds(30)) {
        status st;
        if (!st.set(qsf_wait(s_, fsn, static_cast<int>(level), no_progress.count(), st.c_info())))
            throw error(st);
    }
    /* qsf_flush_chunk: publishes the chunk and returns the FSN of its last
     * frame (the chunk is unchanged: clear it to reuse) */
    std::int64_t flush(chunk &c) {
        status st;
        std::int64_t fsn = -1;
        if (!st.set(qsf_flush_chunk(s_, c.get(), &fsn, st.c_info())))
            throw error(st);
        return fsn;
    }
    /* qsf_send_arrow_stream: every batch of the stream into `table`; returns
     * the rows published */
    std::uint64_t send_arrow_stream(std::string_view table, ArrowArrayStream &stream,
                                    const char *ts_col = nullptr) {
        status st;
        std::uint64_t rows = 0;
        if (!st.set(qsf_send_arrow_stream(s_, table.data(), table.size(), &stream, ts_col, &rows,
                                          st.c_info())))
            throw error(st);
        return rows;
    }
    /* qsf_send_arrow_stream_typed: the same, with columns asked to become
     * the QuestDB types of types[0..n_types) (e.g. {"venue", QSF_TYPE_SYMBOL}) */
    std::uint64_t send_arrow_stream(std::string_view table, ArrowArrayStream &stream,
                                    const char *ts_col, const qsf_arrow_col_type *types,
                                    std::size_t n_types) {
        status st;
        std::uint64_t rows = 0;
        if (!st.set(qsf_send_arrow_stream_typed(s_, table.data(), table.size(), &stream, ts_col,
                                                types, n_types, &rows, st.c_info())))
            throw error(st);
        return rows;
    }
    /* qsf_close_report: returns the report of a clean close, throws
     * close_error (with the report) otherwise; closed either way, except
     * when the close was refused (QSF_E_STATE, see close_now). */
    close_report close() {
        close_report r = close_now();
        if (!r.ok())
            throw close_error(r);
        return r;
    }
};

/* Throws qsf::error when st is a failure: qsf::check(chunk.column(...)). */
inline void check(const status &st) {
    if (!st)
        throw error(st);
}

inline chunk::chunk(std::string_view table) {
    status st;
    if (!st.set(qsf_chunk_new(table.data(), table.size(), &c_, st.c_info())))
        throw error(st);
}
#endif

} // namespace qsf

#endif /* C++17 */
#endif /* QSF_HPP */
