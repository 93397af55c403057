// A user's C++17 program, built out of the tree by check_install.sh against the
// installed qsf only: `c++ -std=c++17 ... $(pkg-config --cflags --libs qsf)`.
// It includes qsf.h, and qsf.hpp when the build installs it (QSF_EXPECT_HPP:
// then a missing qsf.hpp fails the compile). Prints one line per check that
// fails and exits 1 then; exits 0 when every check holds.
// Usage: consumer_cpp VERSION (what `pkg-config --modversion qsf` says).
#include <qsf.h>
#ifdef QSF_EXPECT_HPP
#include <qsf.hpp>
#endif

#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

int failures = 0;

void check(bool ok, std::string_view what, std::string_view detail) {
    if (!ok) {
        std::printf("FAIL: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
                    static_cast<int>(detail.size()), detail.data());
        failures++;
    }
}

int parse(std::string_view s, qsf_errinfo &e) {
    qsf_conf *c = nullptr;
    int rc = qsf_conf_parse(s.data(), s.size(), &c, &e);
    qsf_conf_free(c);
    return rc;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: consumer_cpp VERSION\n");
        return 64;
    }
    std::string_view expected = argv[1];
    check(expected == QSF_VERSION_STRING, "QSF_VERSION_STRING is the .pc's version",
          QSF_VERSION_STRING);
    check(expected == qsf_version(), "qsf_version() is the .pc's version", qsf_version());
    qsf_errinfo e{};
    int rc = parse("ws::addr=127.0.0.1:9000;auto_flush_rows=10;", e);
    check(rc == QSF_OK, "a valid connect string parses", e.msg);
    rc = parse("ws::addr=127.0.0.1:9000;no_such_key=1;", e);
    check(rc == QSF_E_CONF, "an unknown key is QSF_E_CONF", qsf_err_name(rc));
    check(std::strstr(e.msg, "no_such_key") != nullptr, "the message names the key", e.msg);
    return failures ? 1 : 0;
}
