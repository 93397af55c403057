/* DuckDB's C API, the few calls the Arrow tests use, found by dlopen in the
 * libduckdb.so that scripts/fetch-duckdb.sh caches ($QSF_DUCKDB_LIB wins).
 * Handles are opaque pointers; duckdb_state 0 is success. The Arrow calls are
 * DuckDB's materialized-result ones: duckdb_query_arrow runs the query,
 * duckdb_query_arrow_schema / _array fill the ArrowSchema / ArrowArray whose
 * address is passed (an array left with release == NULL: no more batches). */
#ifndef QSF_TEST_DUCKDB_DL_H
#define QSF_TEST_DUCKDB_DL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct duck_api {
    void *lib;
    int (*open)(const char *path, void **db);
    int (*connect)(void *db, void **conn);
    int (*query_arrow)(void *conn, const char *sql, void **result);
    int (*query_arrow_schema)(void *result, void **schema);
    int (*query_arrow_array)(void *result, void **array);
    const char *(*query_arrow_error)(void *result);
    void (*destroy_arrow)(void **result);
    void (*disconnect)(void **conn);
    void (*close)(void **db);
    const char *(*library_version)(void);
} duck_api;

/* Where the library is: $QSF_DUCKDB_LIB, else the cache of fetch-duckdb.sh. */
static inline const char *duck_path(char *buf, size_t cap) {
    const char *env = getenv("QSF_DUCKDB_LIB");
    if (env != NULL && env[0] != '\0')
        return env;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg != NULL && xdg[0] != '\0')
        snprintf(buf, cap, "%s/qsf/duckdb/libduckdb.so", xdg);
    else
        snprintf(buf, cap, "%s/.cache/qsf/duckdb/libduckdb.so", home ? home : "");
    return buf;
}

/* Loads the library; 0, or -1 with the reason in why. */
static inline int duck_load(duck_api *d, char *why, size_t cap) {
    char buf[1024];
    const char *path = duck_path(buf, sizeof buf);
    d->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (d->lib == NULL) {
        snprintf(why, cap, "DuckDB not found (%s); run scripts/fetch-duckdb.sh", dlerror());
        return -1;
    }
#define DUCK_SYM(field, name)                                                                      \
    do {                                                                                           \
        *(void **) &d->field = dlsym(d->lib, name);                                                \
        if (d->field == NULL) {                                                                    \
            snprintf(why, cap, "%s has no %s", path, name);                                        \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)
    DUCK_SYM(open, "duckdb_open");
    DUCK_SYM(connect, "duckdb_connect");
    DUCK_SYM(query_arrow, "duckdb_query_arrow");
    DUCK_SYM(query_arrow_schema, "duckdb_query_arrow_schema");
    DUCK_SYM(query_arrow_array, "duckdb_query_arrow_array");
    DUCK_SYM(query_arrow_error, "duckdb_query_arrow_error");
    DUCK_SYM(destroy_arrow, "duckdb_destroy_arrow");
    DUCK_SYM(disconnect, "duckdb_disconnect");
    DUCK_SYM(close, "duckdb_close");
    DUCK_SYM(library_version, "duckdb_library_version");
#undef DUCK_SYM
    return 0;
}

#endif
