/* Sizes, magics and names of the slot files (docs/FORMAT.md). Constants only;
 * each file's layout is drawn where its codec lives: segments (*.sfa) in
 * segfmt.h, .ack-watermark and sf-manifest.bin in sidefile.h, .symbol-dict in
 * symdict.h. */
#ifndef QSF_SFA_H
#define QSF_SFA_H

#define QSF_SFA_MAGIC                  0x31304653u /* "SF01" */
#define QSF_SFA_VERSION                1
#define QSF_SFA_HEADER_SIZE            24
#define QSF_SFA_FRAME_OVERHEAD         8
#define QSF_SFA_FLAG_MANIFEST_REQUIRED 0x01
#define QSF_SFA_MIN_SEGMENT            33 /* header + envelope + 1 byte */

#define QSF_AKW_MAGIC 0x31574B41u /* "AKW1" .ack-watermark */
#define QSF_SFM_MAGIC 0x314D4653u /* "SFM1" sf-manifest.bin */
#define QSF_SYD_MAGIC 0x31445953u /* "SYD1" .symbol-dict */
#define QSF_QWP_MAGIC 0x31505751u /* "QWP1" frame payload */

#define QSF_DUAL_FILE_SIZE   8192 /* two 4096-byte slots */
#define QSF_DUAL_SLOT_SIZE   4096
#define QSF_DUAL_RECORD_SIZE 64
#define QSF_DUAL_CRC_OFFSET  60

#define QSF_SYD_HEADER_SIZE     8
#define QSF_SYD_VERSION         1
#define QSF_SYMDICT_MAX_ENTRIES 2000000

#define QSF_NAME_INITIAL    "sf-initial.sfa"
#define QSF_NAME_WATERMARK  ".ack-watermark"
#define QSF_NAME_MANIFEST   "sf-manifest.bin"
#define QSF_NAME_SYMDICT    ".symbol-dict"
#define QSF_NAME_LOCK       ".lock"
#define QSF_NAME_LOCK_PID   ".lock.pid"
#define QSF_NAME_FAILED     ".failed"
#define QSF_NAME_PUBLISHED  ".published-fsn" /* qsf only: slot_published.c */
#define QSF_NAME_SLOT_LOCKS ".slot-locks"

#define QSF_MAX_TRIMS_PER_PASS      64
#define QSF_MIN_LIVE_SEGMENTS       2
#define QSF_MAX_QUARANTINE_ATTEMPTS 64
#define QSF_MAX_QUARANTINED_KEPT    8 /* quarantined files kept per slot */

#endif
