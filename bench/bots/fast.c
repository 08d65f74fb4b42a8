/* fast: an arena protocol v1 bot that answers every request at once with the
 * first legal answer it lists (the first field after ":").
 *
 * The bot with (nearly) no cost of its own, so that a game's wall time is the
 * referee's: bench/referee_overhead.py, bench/scale.py, bench/run_cost.py.  It
 * reads lines with fgets, ignores every line but "arena", "request" and "quit",
 * and flushes after each line it writes; at the end it writes its own CPU time
 * to stderr.  Built by the benchmark: cc -O2 fast.c
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

int main(void) {
    static char line[8192];
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (strncmp(line, "request ", 8) == 0) {
            char *id = line + 8;
            char *id_end = strchr(id, ' ');
            char *colon = strstr(line, " : ");
            if (id_end == NULL || colon == NULL) continue;
            char *answer = colon + 3;
            answer[strcspn(answer, " \r\n")] = '\0';
            *id_end = '\0';
            printf("%s %s\n", id, answer);
            fflush(stdout);
        } else if (strncmp(line, "arena ", 6) == 0) {
            printf("hello fast\n");
            fflush(stdout);
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        }
    }
    /* Its own CPU time, for the log: bench/run_cost.py takes it off arena's. */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "fast: cpu_us=%ld\n",
            (long)((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L +
                   ru.ru_utime.tv_usec + ru.ru_stime.tv_usec));
    return 0;
}
