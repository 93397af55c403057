/* qsf_text_escape: what a hostile server message or file name becomes when it
 * is printed. Every control character is visible, nothing else changes, and a
 * cut never leaves half an escape or half a UTF-8 sequence. */
#include "testutil.h"

#include "text.h"

#include <string.h>

static const char *esc(const char *s, size_t n) {
    static char buf[512];
    size_t len = qsf_text_escape(buf, sizeof buf, s, n);
    assert_true(len < sizeof buf);
    assert_int_equal(strlen(buf), len);
    return buf;
}

#define ESC(lit) esc(lit, sizeof lit - 1)

static void printable_text_and_utf8_are_unchanged(void **state) {
    (void) state;
    assert_string_equal(ESC("table 'trades' not found"), "table 'trades' not found");
    assert_string_equal(ESC("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
                        "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80");
    assert_string_equal(ESC(""), "");
}

static void a_forged_log_line_stays_on_one_line(void **state) {
    (void) state;
    assert_string_equal(ESC("bad row\nqsf WARN connected to evil\r\n"),
                        "bad row\\nqsf WARN connected to evil\\r\\n");
    assert_string_equal(ESC("a\tb"), "a\\tb");
}

static void terminal_escapes_are_shown_not_sent(void **state) {
    (void) state;
    /* ESC [ 2 J clears the screen; ESC ] 0 ; ... BEL sets the window title */
    assert_string_equal(ESC("\x1b[2Jx\x1b]0;pwned\x07"), "\\x1b[2Jx\\x1b]0;pwned\\x07");
    assert_string_equal(ESC("del\x7f"), "del\\x7f");
    assert_string_equal(esc("nul\0after", 9), "nul\\x00after");
}

static void c1_controls_are_escaped_in_both_forms(void **state) {
    (void) state;
    /* U+009B (CSI) and U+0085 (NEL) written as UTF-8 */
    assert_string_equal(ESC("\xc2\x9b"
                            "31m\xc2\x85"),
                        "\\u009b31m\\u0085");
    /* the raw 8-bit CSI byte is not UTF-8: shown as a byte */
    assert_string_equal(ESC("\x9b"
                            "31m"),
                        "\\x9b31m");
    /* U+00A0 (the first code point after C1) is text */
    assert_string_equal(ESC("\xc2\xa0"), "\xc2\xa0");
}

static void separators_and_bidi_overrides_are_escaped(void **state) {
    (void) state;
    assert_string_equal(ESC("a\xe2\x80\xa8"
                            "b\xe2\x80\xa9"),
                        "a\\u2028b\\u2029");
    /* RIGHT-TO-LEFT OVERRIDE makes "txt.exe" read as "exe.txt" */
    assert_string_equal(ESC("sf-\xe2\x80\xae"
                            "txt.sfa"),
                        "sf-\\u202etxt.sfa");
    assert_string_equal(ESC("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
}

static void invalid_utf8_bytes_are_shown_as_bytes(void **state) {
    (void) state;
    assert_string_equal(ESC("\xff\xfe"), "\\xff\\xfe");
    assert_string_equal(ESC("\xc0\xaf"), "\\xc0\\xaf");          /* overlong '/' */
    assert_string_equal(ESC("\xed\xa0\x80"), "\\xed\\xa0\\x80"); /* surrogate */
    assert_string_equal(ESC("ab\xe2\x82"), "ab\\xe2\\x82");      /* truncated */
}

static void escaping_twice_changes_nothing(void **state) {
    (void) state;
    static const char hostile[] = "a\\b\n\x1b[31m\xc2\x85\xe2\x80\xae\xff\x01z";
    char once[256], twice[256];
    qsf_text_escape(once, sizeof once, hostile, sizeof hostile - 1);
    qsf_text_escape(twice, sizeof twice, once, strlen(once));
    assert_string_equal(once, "a\\b\\n\\x1b[31m\\u0085\\u202e\\xff\\x01z");
    assert_string_equal(twice, once);
}

static void a_cut_keeps_whole_pieces_and_reports_the_full_length(void **state) {
    (void) state;
    char buf[6];
    /* "ab\x1b" escapes to "ab\x1b" (6 bytes): only "ab" fits with the NUL */
    assert_int_equal(qsf_text_escape(buf, sizeof buf, "ab\x1b", 3), 6);
    assert_string_equal(buf, "ab");
    /* a 4-byte sequence is not split */
    assert_int_equal(qsf_text_escape(buf, 4, "ab\xf0\x9f\x98\x80", 6), 6);
    assert_string_equal(buf, "ab");
    /* nothing after a cut, even what would fit */
    assert_int_equal(qsf_text_escape(buf, 5, "a\x01zz", 4), 7);
    assert_string_equal(buf, "a");
    assert_int_equal(qsf_text_escape(NULL, 0, "\n", 1), 2);
}

static void the_bound_holds_for_every_byte(void **state) {
    (void) state;
    char in[1], out[QSF_TEXT_ESCAPED_MAX(1)];
    for (int b = 0; b < 256; b++) {
        in[0] = (char) b;
        assert_true(qsf_text_escape(out, sizeof out, in, 1) < sizeof out);
    }
    char c1[2] = {'\xc2', '\x85'}, out2[QSF_TEXT_ESCAPED_MAX(2)];
    assert_true(qsf_text_escape(out2, sizeof out2, c1, 2) < sizeof out2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(printable_text_and_utf8_are_unchanged),
        cmocka_unit_test(a_forged_log_line_stays_on_one_line),
        cmocka_unit_test(terminal_escapes_are_shown_not_sent),
        cmocka_unit_test(c1_controls_are_escaped_in_both_forms),
        cmocka_unit_test(separators_and_bidi_overrides_are_escaped),
        cmocka_unit_test(invalid_utf8_bytes_are_shown_as_bytes),
        cmocka_unit_test(escaping_twice_changes_nothing),
        cmocka_unit_test(a_cut_keeps_whole_pieces_and_reports_the_full_length),
        cmocka_unit_test(the_bound_holds_for_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
