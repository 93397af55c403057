/* A CSV file read by DuckDB lands in QuestDB through qsf, store-and-forward.
 *
 * DuckDB hands its query results out as Arrow record batches (the Arrow C Data
 * Interface); qsf takes them as they are, one call per batch, without copying
 * a value: qsf_chunk_arrow_batch adds every column of the batch to a chunk,
 * qsf_flush_chunk publishes it (into the slot's files first, with sf_dir set).
 *
 *   arrow_duckdb FILE.csv [CONF]
 *
 * FILE.csv has a header line and the columns ts (a timestamp), sym, price and
 * qty; they become table "trades" with ts as the designated timestamp and sym
 * a SYMBOL. DuckDB is loaded at run time: $QSF_DUCKDB_LIB, or the copy
 * scripts/fetch-duckdb.sh caches (~/.cache/qsf/duckdb/libduckdb.so). Exits 0
 * once the server acknowledged every row, 2 when DuckDB is not there.
 */
#include <qsf.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few calls of DuckDB's C API used here (duckdb.h declares them; handles
 * are pointers, a state of 0 is success). */
static struct {
    int (*open)(const char *path, void **db);
    int (*connect)(void *db, void **conn);
    int (*query_arrow)(void *conn, const char *sql, void **result);
    int (*query_arrow_schema)(void *result, void **schema);
    int (*query_arrow_array)(void *result, void **array);
    const char *(*query_arrow_error)(void *result);
    void (*destroy_arrow)(void **result);
} duck;

static int load_duckdb(void) {
    char path[1024];
    const char *env = getenv("QSF_DUCKDB_LIB"), *home = getenv("HOME");
    if (env != NULL && env[0] != '\0')
        snprintf(path, sizeof path, "%s", env);
    else
        snprintf(path, sizeof path, "%s/.cache/qsf/duckdb/libduckdb.so", home ? home : "");
    void *lib = dlopen(path, RTLD_NOW);
    if (lib == NULL)
        return fprintf(stderr, "DuckDB: %s (scripts/fetch-duckdb.sh fetches it)\n", dlerror()), -1;
    *(void **) &duck.open = dlsym(lib, "duckdb_open");
    *(void **) &duck.connect = dlsym(lib, "duckdb_connect");
    *(void **) &duck.query_arrow = dlsym(lib, "duckdb_query_arrow");
    *(void **) &duck.query_arrow_schema = dlsym(lib, "duckdb_query_arrow_schema");
    *(void **) &duck.query_arrow_array = dlsym(lib, "duckdb_query_arrow_array");
    *(void **) &duck.query_arrow_error = dlsym(lib, "duckdb_query_arrow_error");
    *(void **) &duck.destroy_arrow = dlsym(lib, "duckdb_destroy_arrow");
    if (!duck.open || !duck.connect || !duck.query_arrow || !duck.query_arrow_schema ||
        !duck.query_arrow_array || !duck.query_arrow_error || !duck.destroy_arrow)
        return fprintf(stderr, "DuckDB: %s lacks the Arrow C API\n", path), -1;
    return 0;
}

/* Every batch of the result: added to the chunk and published. The batch's
 * buffers must live until qsf_flush_chunk returns; then it is released. */
static int send_batches(qsf_sender *s, void *result, const struct ArrowSchema *schema,
                        uint64_t *rows, qsf_errinfo *e) {
    qsf_chunk *c;
    int rc = qsf_chunk_new("trades", 6, &c, e);
    if (rc == QSF_OK) /* a VARCHAR in DuckDB, a SYMBOL in QuestDB */
        rc = qsf_chunk_arrow_type(c, "sym", 3, QSF_TYPE_SYMBOL, e);
    while (rc == QSF_OK) {
        struct ArrowArray batch;
        memset(&batch, 0, sizeof batch);
        void *out = &batch;
        if (duck.query_arrow_array(result, &out) != 0) {
            fprintf(stderr, "DuckDB: %s\n", duck.query_arrow_error(result));
            rc = QSF_E_VALUE;
            break;
        }
        if (batch.release == NULL)
            break; /* no more batches */
        qsf_chunk_clear(c);
        rc = qsf_chunk_arrow_batch(c, schema, &batch, "ts", e);
        if (rc == QSF_OK)
            rc = qsf_flush_chunk(s, c, NULL, e); /* in the slot's files once this returns */
        if (rc == QSF_OK)
            *rows += qsf_chunk_rows(c);
        qsf_chunk_clear(c);
        batch.release(&batch);
    }
    qsf_chunk_free(c);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return fprintf(stderr, "usage: arrow_duckdb FILE.csv [CONF]\n"), 1;
    const char *conf =
        argc > 2 ? argv[2] : "ws::addr=localhost:9000;sf_dir=qdb-sf;sender_id=duckdb;";
    if (load_duckdb() != 0)
        return 2;
    void *db, *conn, *result;
    if (duck.open(NULL, &db) != 0 || duck.connect(db, &conn) != 0)
        return fprintf(stderr, "DuckDB: cannot open an in-memory database\n"), 1;
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SELECT * FROM read_csv('%s', header = true, columns = {'ts': 'TIMESTAMP',"
             " 'sym': 'VARCHAR', 'price': 'DOUBLE', 'qty': 'BIGINT'})",
             argv[1]);
    if (duck.query_arrow(conn, sql, &result) != 0)
        return fprintf(stderr, "DuckDB: %s\n", duck.query_arrow_error(result)), 1;
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    void *out = &schema;
    if (duck.query_arrow_schema(result, &out) != 0)
        return fprintf(stderr, "DuckDB: %s\n", duck.query_arrow_error(result)), 1;

    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK)
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    uint64_t rows = 0;
    int rc = send_batches(s, result, &schema, &rows, &e);
    if (rc != QSF_OK)
        fprintf(stderr, "%s: %s\n", qsf_err_name(rc), e.msg);
    schema.release(&schema); /* the schema may go as soon as the chunk calls returned */
    duck.destroy_arrow(&result);
    /* close waits until the server acknowledged everything */
    if (qsf_close(s, &e) != QSF_OK)
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(e.code), e.msg), 1;
    if (rc != QSF_OK)
        return 1;
    printf("%llu rows acknowledged\n", (unsigned long long) rows);
    return 0;
}
