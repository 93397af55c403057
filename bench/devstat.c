/* Bytes written to a directory's block device (devstat.h). */
#include "devstat.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int64_t dev_written_bytes(const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0 || major(st.st_dev) == 0)
        return -1; /* major 0: an anonymous device (tmpfs, overlay) */
    char p[64];
    snprintf(p, sizeof p, "/sys/dev/block/%u:%u/stat", major(st.st_dev), minor(st.st_dev));
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    /* reads, reads merged, sectors read, ms reading, writes, writes merged,
     * sectors written (512-byte units whatever the device's sector size) */
    unsigned long long v[7];
    int n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6]);
    fclose(f);
    return n == 7 ? (int64_t) (v[6] * 512) : -1;
}
