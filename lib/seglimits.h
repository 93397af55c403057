/* The range of sf_max_segment_bytes. The ring refuses to open outside it and
 * the connect-string parser rejects a value outside it, both from these
 * constants, so a string that `qsf conf check` accepts is one qsf_sender_new
 * accepts. A ground header because conf and sf may not include each other. */
#ifndef QSF_SEGLIMITS_H
#define QSF_SEGLIMITS_H

#include <stdint.h>

/* A segment header (24 bytes), one frame envelope (8) and one payload byte;
 * equal to QSF_SFA_MIN_SEGMENT of the file format (sf/sfa.h). */
#define QSF_SEGMENT_MIN_BYTES 33

/* Frame lengths inside a segment are 32-bit; the ring keeps a whole segment
 * below 2^31 so that no offset or length can overflow them. */
#define QSF_SEGMENT_MAX_BYTES INT32_MAX

#endif
