/* c_bot: a Coup bot in C for the arena protocol (version 1).
 *
 * It reads the referee's lines on stdin and writes its own on stdout, flushing
 * after each: `hello c-bot` to the handshake, and to every request one of the
 * legal answers the request lists (the fields after ":"): a Coup when one is
 * listed, otherwise an answer chosen at random, from the `seed` line of each
 * game so that a game replays the same.
 * Every other line is ignored; it plays any number of games and exits on
 * `quit` or at the end of its input.
 * Built by the build step of bot.toml: cc -O2 -o bot bot.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_BYTES 8192 /* the referee's lines are at most 4096 bytes */
#define MAX_FIELDS 1024

/* A 64-bit linear congruential generator, random enough to pick answers. */
static unsigned long long state;

static int pick(int count) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((state >> 32) % (unsigned)count);
}

static void answer(const char *id, char **legal, int count) {
    int coups[MAX_FIELDS];
    int ncoups = 0;
    for (int i = 0; i < count; i++) {
        if (strncmp(legal[i], "coup:", 5) == 0) coups[ncoups++] = i;
    }
    int chosen = ncoups > 0 ? coups[pick(ncoups)] : pick(count);
    printf("%s %s\n", id, legal[chosen]);
    fflush(stdout); /* the referee waits for this line: never leave it in a buffer */
}

int main(void) {
    static char line[LINE_BYTES];
    char *fields[MAX_FIELDS];

    state = (unsigned long long)getpid(); /* until a `seed` line comes */
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (strchr(line, '\n') == NULL && !feof(stdin)) {
            /* Longer than the protocol allows: drop the rest and ignore it. */
            int c;
            while ((c = getchar()) != EOF && c != '\n') {
            }
            continue;
        }
        int n = 0;
        for (char *f = strtok(line, " \t\r\n"); f != NULL && n < MAX_FIELDS;
             f = strtok(NULL, " \t\r\n")) {
            fields[n++] = f;
        }
        if (n == 0) continue;
        if (strcmp(fields[0], "arena") == 0) {
            printf("hello c-bot\n");
            fflush(stdout);
        } else if (strcmp(fields[0], "seed") == 0 && n > 1) {
            state = strtoull(fields[1], NULL, 10);
        } else if (strcmp(fields[0], "request") == 0) {
            for (int i = 2; i < n - 1; i++) {
                if (strcmp(fields[i], ":") == 0) {
                    answer(fields[1], &fields[i + 1], n - i - 1);
                    break;
                }
            }
        } else if (strcmp(fields[0], "quit") == 0) {
            break;
        }
    }
    return 0;
}
