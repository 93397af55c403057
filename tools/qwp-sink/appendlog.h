/* The --append file: committed rows as JSON lines, written before any
 * acknowledgement that covers them.
 *
 *   commit ──> pend (rows formatted, not yet in the file)
 *   OK / durable ack due, or end of a socket read ──> appendlog_write:
 *       one write(2) of everything pending [+ fdatasync with sync]
 *   only then is the acknowledgement queued
 *
 * So a sink killed at any moment (SIGKILL included) has in its file every row
 * it ever acknowledged; with sync, a host crash too. A kill inside a write can
 * leave a torn last line, never acknowledged: the next open cuts it off. */
#ifndef QSINK_APPENDLOG_H
#define QSINK_APPENDLOG_H

#include <stddef.h>

#include "buf.h"

struct appendlog {
    int fd;
    int sync;              /* fdatasync after every write */
    int unsynced;          /* with sync: written since the last successful fdatasync */
    int failing;           /* the last write failed (reported once per failure streak) */
    struct buf pend;       /* formatted rows not yet written */
    long long rows_before; /* lines the file held when opened: rows of earlier runs */
    char path[512];
};

/* Opens (creates, appends to) path; a torn last line left by a sink killed
 * inside a write is cut off first. The rows already in the file are counted
 * (rows_before) and, when there are any, named on stderr: this run's counts
 * (rows, duplicates) do not include them. 0, or -1 with a message. */
int appendlog_open(struct appendlog *a, const char *path, int sync, char *err, size_t cap);

/* Whether rows are waiting to be written. */
int appendlog_pending(const struct appendlog *a);

/* Writes every pending row (and syncs with sync). 0 when nothing is pending
 * any more; -1 when the file could not take them: what was not written stays
 * pending for the next call, and the failure is reported on stderr. */
int appendlog_write(struct appendlog *a);

/* Writes what is pending (best effort) and closes. */
void appendlog_close(struct appendlog *a);

#endif
