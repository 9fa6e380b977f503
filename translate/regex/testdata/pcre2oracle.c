/* pcre2oracle: matches patterns with libpcre2-8 exactly as Apache's
 * ap_regcomp/ap_regexec do (server/util_pcre.c, HAVE_PCRE2), for
 * TestPCRE2Oracle. One request a line on stdin:
 *
 *     CFLAGS HEX(pattern) HEX(subject)
 *
 * CFLAGS is the pcre2_compile options (decimal); the answer on stdout is
 * "ERR", "NOMATCH", "FAIL <rc>" (a match error such as the match limit)
 * or "MATCH" followed by the ovector pairs (-1 for an unset group).
 * Build: cc -O2 -o pcre2oracle pcre2oracle.c -lpcre2-8 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unhex(const char *h, unsigned char *out)
{
    int n = 0;
    if (h[0] == '-' && h[1] == 0)
        return 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (unsigned char)v;
    }
    return n;
}

int main(void)
{
    static char line[1 << 20];
    static unsigned char pat[1 << 19], subj[1 << 19];
    while (fgets(line, sizeof line, stdin)) {
        char *opt = strtok(line, " \n"), *hp = strtok(NULL, " \n"), *hs = strtok(NULL, " \n");
        if (!opt || !hp || !hs) {
            puts("BAD");
            fflush(stdout);
            continue;
        }
        int pl = unhex(hp, pat), sl = unhex(hs, subj);
        int err;
        PCRE2_SIZE eoff;
        pcre2_code *re = pcre2_compile(pat, pl, (uint32_t)strtoul(opt, NULL, 10), &err, &eoff, NULL);
        if (!re) {
            printf("ERR %d\n", err);
            fflush(stdout);
            continue;
        }
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
        int rc = pcre2_match(re, subj, sl, 0, 0, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) {
            puts("NOMATCH");
        } else if (rc < 0) {
            printf("FAIL %d\n", rc);
        } else {
            uint32_t n = pcre2_get_ovector_count(md);
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            printf("MATCH");
            for (uint32_t i = 0; i < n; i++) {
                if (ov[2 * i] == PCRE2_UNSET)
                    printf(" -1 -1");
                else
                    printf(" %ld %ld", (long)ov[2 * i], (long)ov[2 * i + 1]);
            }
            putchar('\n');
        }
        fflush(stdout);
        pcre2_match_data_free(md);
        pcre2_code_free(re);
    }
    return 0;
}
