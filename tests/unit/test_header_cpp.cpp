// The public header must compile as C++ (extern "C", no C-only constructs).
#include "qsf.h"

#include <cstdio>
#include <cstring>

int main() {
    qsf_errinfo e;
    std::memset(&e, 0, sizeof e);
    int ok = std::strcmp(qsf_err_name(QSF_E_FULL), "QSF_E_FULL") == 0;
    std::printf("1..1\n%s 1 - qsf.h compiles and links from C++\n", ok ? "ok" : "not ok");
    return ok ? 0 : 1;
}
