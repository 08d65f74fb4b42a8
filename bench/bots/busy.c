/* busy: an arena protocol v1 bot that thinks with the CPU before each answer.
 *
 * To each request it burns CPU_MS milliseconds of its own CPU time (measured on
 * CLOCK_PROCESS_CPUTIME_ID, so a loaded machine stretches the wall time), but
 * never spins longer than WALL_CAP_MS of wall time (0: no cap), then answers one
 * of the listed answers at random (rand() seeded from the pid).
 *
 * PROMPT=1 makes the "prompt" bot of bench/fair_time.py instead: it spins for a
 * random 0..WALL_CAP_MS ms of wall time (CLOCK_MONOTONIC) from reading the
 * request, so it always answers within WALL_CAP_MS plus its wake-up delay.
 *
 * Either way it keeps the largest time it took, from reading a request line to
 * writing its answer (wall clock, its own view), and writes it to stderr on
 * "quit" or at the end of input: "busy: <name> answers <n> max_ms <x>".
 *
 * Built by the benchmarks with -D options, e.g.
 *   cc -O2 -DCPU_MS=5 -DNAME='"busy5"' -o bench/out/bots/busy5 busy.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef CPU_MS
#define CPU_MS 5
#endif
#ifndef WALL_CAP_MS
#define WALL_CAP_MS 0
#endif
#ifndef PROMPT
#define PROMPT 0
#endif
#ifndef NAME
#define NAME "busy"
#endif

#define MAX_FIELDS 1024

static double now_ms(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

/* Spin until `cpu_ms` of CPU time are used or `wall_ms` of wall time passed
 * since `start` (a CLOCK_MONOTONIC reading); a limit <= 0 is not checked. */
static void spin(double cpu_ms, double wall_ms, double start) {
    double cpu0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    for (;;) {
        for (int i = 0; i < 2000; i++) sink += (unsigned long)i * 2654435761u;
        if (cpu_ms > 0 && now_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0 >= cpu_ms) return;
        if (wall_ms > 0 && now_ms(CLOCK_MONOTONIC) - start >= wall_ms) return;
        if (cpu_ms <= 0 && wall_ms <= 0) return;
    }
}

int main(void) {
    static char line[8192];
    char *fields[MAX_FIELDS];
    double worst = 0;
    long answers = 0;

    srand((unsigned)getpid());
    while (fgets(line, sizeof line, stdin) != NULL) {
        double start = now_ms(CLOCK_MONOTONIC);
        int n = 0;
        for (char *f = strtok(line, " \t\r\n"); f != NULL && n < MAX_FIELDS;
             f = strtok(NULL, " \t\r\n")) {
            fields[n++] = f;
        }
        if (n == 0) continue;
        if (strcmp(fields[0], "arena") == 0) {
            printf("hello %s\n", NAME);
            fflush(stdout);
        } else if (strcmp(fields[0], "request") == 0) {
            int colon = -1;
            for (int i = 2; i < n - 1; i++) {
                if (strcmp(fields[i], ":") == 0) { colon = i; break; }
            }
            if (colon < 0) continue;
            if (PROMPT) {
                spin(0, WALL_CAP_MS > 0 ? rand() % (WALL_CAP_MS + 1) : 0, start);
            } else {
                spin(CPU_MS, WALL_CAP_MS, start);
            }
            int count = n - colon - 1;
            printf("%s %s\n", fields[1], fields[colon + 1 + rand() % count]);
            fflush(stdout);
            double took = now_ms(CLOCK_MONOTONIC) - start;
            if (took > worst) worst = took;
            answers++;
        } else if (strcmp(fields[0], "quit") == 0) {
            break;
        }
    }
    fprintf(stderr, "busy: %s answers %ld max_ms %.2f\n", NAME, answers, worst);
    return 0;
}
