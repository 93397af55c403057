/* Replay driver for fuzz targets built without libFuzzer: runs
 * LLVMFuzzerTestOneInput over every file named on the command line, or every
 * file in the directories named. Prints TAP so meson counts each input. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, int n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("not ok %d - cannot open %s\n", n, path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(len > 0 ? (size_t) len : 1);
    size_t got = fread(buf, 1, (size_t) len, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    printf("ok %d - %s\n", n, path);
    return 0;
}

static int count_or_run(const char *arg, int *n, int run) {
    struct stat st;
    if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        ++*n;
        return run ? run_file(arg, *n) : 0;
    }
    DIR *d = opendir(arg);
    struct dirent *e;
    int bad = 0;
    char path[4096];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", arg, e->d_name);
        ++*n;
        if (run)
            bad |= run_file(path, *n);
    }
    if (d)
        closedir(d);
    return bad;
}

int main(int argc, char **argv) {
    int total = 0, n = 0, bad = 0;
    for (int i = 1; i < argc; i++)
        count_or_run(argv[i], &total, 0);
    printf("1..%d\n", total);
    for (int i = 1; i < argc; i++)
        bad |= count_or_run(argv[i], &n, 1);
    return bad;
}
