/* fnmatchoracle: APR's apr_fnmatch, for TestFnmatchOracle. One request a
 * line on stdin: FLAGS HEX(pattern) HEX(string); the answer is 1 (match)
 * or 0. Build: cc -o fnmatchoracle fnmatchoracle.c $(pkg-config --cflags
 * --libs apr-1) */
#include <apr_fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void unhex(const char *h, char *out)
{
    int n = 0;
    if (!(h[0] == '-' && h[1] == 0))
        for (; h[0] && h[1]; h += 2) {
            unsigned v;
            sscanf(h, "%2x", &v);
            out[n++] = (char)v;
        }
    out[n] = 0;
}

int main(void)
{
    static char line[1 << 16], pat[1 << 15], str[1 << 15];
    while (fgets(line, sizeof line, stdin)) {
        char *f = strtok(line, " \n"), *hp = strtok(NULL, " \n"), *hs = strtok(NULL, " \n");
        if (!f || !hp || !hs)
            return 1;
        unhex(hp, pat);
        unhex(hs, str);
        printf("%d\n", apr_fnmatch(pat, str, atoi(f)) == 0);
        fflush(stdout);
    }
    return 0;
}
