/* qsf_dir_list_sorted: the one sorted listing of an sf_dir or a slot. The
 * names come back in strcmp order whatever order the filesystem gives, only
 * those the filter keeps, and a listing that fails part-way says why and keeps
 * what it read. */
#include "testutil.h"

#include "os/dirlist.h"
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const NAMES[] = {"zeta", "alpha",   "m.unreplayable-1",
                                    "beta", ".hidden", "Gamma"};
enum { NNAMES = sizeof NAMES / sizeof NAMES[0] };

static DIR *make_dir(char *dir, size_t cap) {
    tu_mkdtemp(dir, cap);
    for (int i = 0; i < NNAMES; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, NAMES[i]);
        assert_int_equal(mkdir(p, 0700), 0);
    }
    DIR *d = opendir(dir);
    assert_non_null(d);
    return d;
}

static bool keep_visible(int dirfd, const struct dirent *de, void *arg) {
    (void) dirfd;
    (*(int *) arg)++;
    return de->d_name[0] != '.';
}

static void names_come_back_filtered_and_sorted(void **state) {
    (void) state;
    char dir[256];
    DIR *d = make_dir(dir, sizeof dir);
    char **names;
    uint32_t n;
    int seen = 0;
    assert_int_equal(qsf_dir_list_sorted(d, keep_visible, &seen, &names, &n), 0);
    closedir(d);
    assert_int_equal(seen, NNAMES + 2); /* every entry offered, "." and ".." too */
    const char *want[] = {"Gamma", "alpha", "beta", "m.unreplayable-1", "zeta"};
    assert_int_equal(n, 5);
    for (uint32_t i = 0; i < n; i++)
        assert_string_equal(names[i], want[i]);
    qsf_dir_names_free(names, n);
    tu_rmtree(dir);
}

static bool keep_none(int dirfd, const struct dirent *de, void *arg) {
    (void) dirfd;
    (void) de;
    (void) arg;
    return false;
}

static void nothing_kept_is_an_empty_listing(void **state) {
    (void) state;
    char dir[256];
    DIR *d = make_dir(dir, sizeof dir);
    char **names;
    uint32_t n = 7;
    assert_int_equal(qsf_dir_list_sorted(d, keep_none, NULL, &names, &n), 0);
    closedir(d);
    assert_int_equal(n, 0);
    qsf_dir_names_free(names, n);
    qsf_dir_names_free(NULL, 0);
    tu_rmtree(dir);
}

/* readdir fails with EIO after four entries */
static int reads_left;
static struct dirent *failing_readdir(DIR *d) {
    if (reads_left-- > 0)
        return readdir(d);
    errno = EIO;
    return NULL;
}

static bool keep_all(int dirfd, const struct dirent *de, void *arg) {
    (void) dirfd;
    (void) arg;
    return strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
}

static void a_read_error_is_reported_with_what_was_read_sorted(void **state) {
    (void) state;
    char dir[256];
    DIR *d = make_dir(dir, sizeof dir);
    reads_left = 4; /* of 8: "." and ".." may be among them */
    qsf_os_table.readdir = failing_readdir;
    char **names;
    uint32_t n;
    int rc = qsf_dir_list_sorted(d, keep_all, NULL, &names, &n);
    int e = errno;
    qsf_os_reset();
    closedir(d);
    assert_int_equal(rc, -1);
    assert_int_equal(e, EIO);
    assert_in_range(n, 2, 4);
    for (uint32_t i = 1; i < n; i++)
        assert_true(strcmp(names[i - 1], names[i]) < 0);
    qsf_dir_names_free(names, n);
    tu_rmtree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_come_back_filtered_and_sorted),
        cmocka_unit_test(nothing_kept_is_an_empty_listing),
        cmocka_unit_test(a_read_error_is_reported_with_what_was_read_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
