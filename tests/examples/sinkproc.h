/* The qwp-sink command as a child process of a test, for tests that must not
 * link qsf's internals (the C++ wrapper's): on 127.0.0.1, port 0, writing
 * every committed row to an append file that the test reads back. */
#ifndef QSF_SINKPROC_H
#define QSF_SINKPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sinkproc {
    pid_t pid;
    uint16_t port;
    char append[512]; /* the rows, one JSON line each: {"table":"t","col":"value",...} */
} sinkproc;

/* Starts `exe --port 0 --append <dir>/rows.jsonl` and reads the port it
 * prints. 0, or -1 with a message on stderr. */
int sinkproc_start(sinkproc *p, const char *exe, const char *dir);

/* SIGTERM, then waits for it. */
void sinkproc_stop(sinkproc *p);

/* Lines of the append file that belong to `table` and contain `needle` (NULL:
 * every line of the table). */
int64_t sinkproc_count(const sinkproc *p, const char *table, const char *needle);

/* A port on 127.0.0.1 that nothing listens on (bound, then closed again). */
uint16_t sinkproc_dead_port(void);

#ifdef __cplusplus
}
#endif

#endif
