/* echo: writes back each line it reads, at once (fgets, fputs, fflush).
 *
 * The other end of the raw round trip in bench/referee_overhead.py: a pipe
 * round trip with no protocol, no parsing and no engine, the limit for any
 * referee.  Built by the benchmark: cc -O2 -o bench/out/bots/echo echo.c
 */
#include <stdio.h>

int main(void) {
    static char line[8192];
    while (fgets(line, sizeof line, stdin) != NULL) {
        fputs(line, stdout);
        fflush(stdout);
    }
    return 0;
}
