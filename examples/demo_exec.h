/* The demo's row count at a real QuestDB: one SQL query through the server's
 * HTTP /exec endpoint (plain HTTP, no credentials). */
#ifndef QSF_DEMO_EXEC_H
#define QSF_DEMO_EXEC_H

#include <stddef.h>
#include <stdint.h>

/* The first host:port of the connect string's addr= (for /exec, which QuestDB
 * serves on the same port as the ingest endpoint). 0, or -1 with no addr. */
int demo_first_addr(const char *conf, char *out, size_t cap);

/* Runs `SELECT count(), count_distinct(trade_id) FROM <table>` at hostport
 * ("host:port" or "[v6]:port"). 0 with *rows and *distinct set; -1 with the
 * reason in why. */
int demo_exec_count(const char *hostport, const char *table, int64_t *rows, int64_t *distinct,
                    char *why, size_t cap);

#endif
