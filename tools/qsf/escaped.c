/* Text from outside the tool (file names, messages that quote them) printed
 * with its control characters escaped (lib/text.h, docs/ERRORS.md). */
#include "cmd.h"

#include "text.h"

#include <string.h>

const char *qsf_cmd_escaped(char *buf, size_t cap, const char *s) {
    qsf_text_escape(buf, cap, s, strlen(s));
    return buf;
}
