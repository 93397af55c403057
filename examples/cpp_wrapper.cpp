// The C++ wrapper (include/qsf.hpp): the same rows as the quick start, built
// fluently, with failures as qsf::error exceptions that carry the code, the
// flags and qsf's message. (qsf::nothrow_sender is the same without
// exceptions: every call returns a qsf::status.)
//
//   cpp_wrapper ['ws::addr=localhost:9000;']
#include <qsf.hpp>

#include <chrono>
#include <cstdio>

int main(int argc, char **argv) {
    const char *conf = argc > 1 ? argv[1] : "ws::addr=localhost:9000;";
    try {
        qsf::sender s(conf); // closes itself when it goes out of scope
        auto t0 = std::chrono::system_clock::now();
        for (int i = 0; i < 100; i++)
            s.table("sensors")
                .symbol("room", i % 2 ? "kitchen" : "hall")
                .column("temp", 20.0 + i * 0.1) // double: DOUBLE
                .column("reading", i)           // int: INT
                .at(t0 + std::chrono::microseconds(i));
        s.wait(s.flush());               // flush returns the FSN to wait for
        qsf::close_report r = s.close(); // throws qsf::close_error unless clean
        std::printf("100 rows acknowledged; %llu frames left unacknowledged\n",
                    static_cast<unsigned long long>(r.info.frames_unacked));
        return 0;
    } catch (const qsf::error &e) {
        std::fprintf(stderr, "%s (retriable: %s)\n", e.what(), e.retriable() ? "yes" : "no");
        return 1;
    }
}
