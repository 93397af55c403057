/* The connection state machine of the I/O thread: the one place the state
 * changes (qsf_io_set_state), and the transitions it allows.
 *
 *              attempt due               upgrade done
 *   WAIT ───────────────────▶ CONNECTING ─────────────▶ OPEN
 *    ▲  ▲   attempt failed       │   │                    │ a verdict, a command,
 *    │  └────────────────────────┘   │ we abort it        │ the latch
 *    │                               ▼                    ▼
 *    │      our close done         CLOSING ◀──────────────┘
 *    ├──────────────────────────────┘ │
 *    │   peer closed / connection lost (from OPEN)
 *    └──────────────────────────────  │
 *                                     ▼ (why: pause / terminal / stop)
 *   PAUSED ──resume──▶ WAIT      TERMINAL (latched)      STOPPED (thread exits)
 *
 * From WAIT and PAUSED a command or the latch moves straight to PAUSED,
 * TERMINAL or STOPPED (there is no connection to close); so do a failed
 * attempt whose failure latched (CONNECTING -> TERMINAL) and a lost connection
 * whose strike declared its frame poisoned (OPEN -> TERMINAL). The initial
 * connect giving up moves WAIT -> STOPPED. Nothing leaves STOPPED; TERMINAL
 * goes only to STOPPED. */
#include "io/io_int.h"

#include "log.h"
#include "qsf_assert.h"

static const char *const names[QSF_IO_NSTATES] = {
    "WAIT", "CONNECTING", "OPEN", "CLOSING", "PAUSED", "TERMINAL", "STOPPED",
};

#define B(s) (1u << (s))

/* allowed[from]: the states it may go to. */
static const unsigned allowed[QSF_IO_NSTATES] = {
    [QSF_IO_WAIT] = B(QSF_IO_WAIT) | B(QSF_IO_CONNECTING) | B(QSF_IO_PAUSED) | B(QSF_IO_TERMINAL) |
                    B(QSF_IO_STOPPED),
    [QSF_IO_CONNECTING] = B(QSF_IO_OPEN) | B(QSF_IO_WAIT) | B(QSF_IO_CLOSING) | B(QSF_IO_TERMINAL),
    [QSF_IO_OPEN] = B(QSF_IO_CLOSING) | B(QSF_IO_WAIT) | B(QSF_IO_TERMINAL),
    [QSF_IO_CLOSING] = B(QSF_IO_WAIT) | B(QSF_IO_PAUSED) | B(QSF_IO_TERMINAL) | B(QSF_IO_STOPPED),
    [QSF_IO_PAUSED] = B(QSF_IO_WAIT) | B(QSF_IO_TERMINAL) | B(QSF_IO_STOPPED),
    [QSF_IO_TERMINAL] = B(QSF_IO_STOPPED),
    [QSF_IO_STOPPED] = 0,
};

const char *qsf_io_state_name(enum qsf_io_state s) {
    return s < QSF_IO_NSTATES ? names[s] : "?";
}

void qsf_io_set_state(qsf_io *io, enum qsf_io_state to) {
    enum qsf_io_state from = io->l.st;
    if (from == to && to != QSF_IO_WAIT)
        return;
    qsf_assert(allowed[from] & B(to));
    if (!(allowed[from] & B(to)))
        QSF_LOGE("I/O thread: state %s -> %s is not a transition of its state machine (a qsf "
                 "bug; please report it)",
                 names[from], names[to]);
    if (from != to)
        QSF_LOGD("I/O state %s -> %s", names[from], names[to]);
    io->l.st = to;
    if (from != to)
        qsf_io_notify(io, from, to);
}
