/* ping: the raw C-to-C pipe round trip, the floor under any referee.
 *
 * Usage: ping ECHO LINE TRIPS.  Starts ECHO (bench/bots/echo.c) with a pipe to
 * its stdin and one from its stdout, writes LINE and a LF, reads until the LF
 * comes back, TRIPS times, and prints one line:
 *     <trips> <wall ns per trip> <own CPU ns per trip>
 * (its own CPU: user + system, getrusage RUSAGE_SELF, so echo's is not in it).
 * Used by bench/run_cost.py.  Built by the benchmark: cc -O2 ping.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

static double wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: ping ECHO LINE TRIPS\n");
        return 2;
    }
    long trips = atol(argv[3]);
    size_t n = strlen(argv[2]) + 1;
    char *out = malloc(n);
    memcpy(out, argv[2], n - 1);
    out[n - 1] = '\n';
    int to_echo[2], from_echo[2];
    if (pipe(to_echo) || pipe(from_echo)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_echo[0], 0);
        dup2(from_echo[1], 1);
        close(to_echo[1]);
        close(from_echo[0]);
        execl(argv[1], argv[1], (char *)NULL);
        _exit(127);
    }
    close(to_echo[0]);
    close(from_echo[1]);
    static char buf[65536];
    double wall0 = wall_ns(), cpu0 = cpu_ns();
    for (long i = 0; i < trips; i++) {
        if (write(to_echo[1], out, n) != (ssize_t)n) return 1;
        size_t got = 0;
        while (got == 0 || buf[got - 1] != '\n') {
            ssize_t r = read(from_echo[0], buf + got, sizeof buf - got);
            if (r <= 0) return 1;
            got += (size_t)r;
        }
    }
    double wall = wall_ns() - wall0, cpu = cpu_ns() - cpu0;
    close(to_echo[1]);
    waitpid(pid, NULL, 0);
    printf("%ld %.0f %.0f\n", trips, wall / trips, cpu / trips);
    return 0;
}
