/* qsf-confdoc: writes docs/CONFIGURATION.md rendered from the property table.
 *   qsf-confdoc <path>          write the file
 *   qsf-confdoc --check <path>  exit 1 if the file differs (names the first line) */
#include "conf/conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static int check(const char *path, const char *want) {
    size_t len = 0, line = 1;
    char *have = read_all(path, &len);
    if (!have) {
        fprintf(stderr, "qsf-confdoc: cannot read %s\n", path);
        return 1;
    }
    size_t i = 0, wlen = strlen(want);
    while (i < len && i < wlen && have[i] == want[i])
        line += have[i++] == '\n';
    free(have);
    if (i == len && i == wlen)
        return 0;
    fprintf(stderr,
            "qsf-confdoc: %s is stale from line %zu; regenerate it with "
            "`ninja -C build docs-configuration`\n",
            path, line);
    return 1;
}

int main(int argc, char **argv) {
    bool do_check = argc == 3 && strcmp(argv[1], "--check") == 0;
    if (argc != 2 && !do_check) {
        fprintf(stderr, "usage: qsf-confdoc [--check] <path of CONFIGURATION.md>\n");
        return 64;
    }
    char *doc = qsf_conf_render_docs();
    if (!doc)
        return 1;
    const char *path = argv[argc - 1];
    int rc = 0;
    if (do_check) {
        rc = check(path, doc);
    } else {
        FILE *f = fopen(path, "wb");
        rc = !f || fputs(doc, f) < 0;
        if (f && fclose(f) != 0)
            rc = 1;
        if (rc)
            fprintf(stderr, "qsf-confdoc: cannot write %s\n", path);
    }
    free(doc);
    return rc;
}
