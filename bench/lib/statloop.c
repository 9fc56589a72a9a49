/* bench/lib/statloop.c: the stat phase's loop of each tool, as a plain program, so that the
 * cost of what a tool does around each call is measured with the call held the same.
 *
 *   statloop mdtest|iosurvey DIR N PREFIX   stats DIR/PREFIX0 .. DIR/PREFIX<N-1>; prints the
 *                                           loop's seconds
 *
 * mdtest:   mdtest_stat's work per item (ior 5fcf0ba, src/mdtest.c): two PATH_MAX buffers
 *           zeroed, the name and then the path formatted with sprintf, copied back, a
 *           gettimeofday, then stat(path).
 * iosurvey: what engine/meta.rs does per item in path mode: the index's digits written after
 *           a name kept from the phase's start, the path's directory part kept, a monotonic
 *           clock read before and after the call (its latency histogram), then the call,
 *           fstatat(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW).
 * Both make one stat per item on the same absolute path; only the work around it differs. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double mdtest_loop(const char *dir, unsigned long n, const char *prefix) {
    char item[PATH_MAX], temp[PATH_MAX];
    struct stat buf;
    volatile double stamps = 0;
    for (unsigned long i = 0; i < n; i++) {
        memset(item, 0, PATH_MAX);
        memset(temp, 0, PATH_MAX);
        sprintf(item, "%s%lu", prefix, i);
        sprintf(temp, "%s/%s", dir, item);
        strcpy(item, temp);
        struct timeval tv;
        gettimeofday(&tv, NULL);
        stamps += (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
        if (stat(item, &buf) != 0) {
            perror(item);
            exit(1);
        }
    }
    return stamps;
}

static double iosurvey_loop(const char *dir, unsigned long n, const char *prefix) {
    char path[PATH_MAX];
    struct stat buf;
    volatile double spent = 0;
    size_t kept = (size_t)snprintf(path, sizeof path, "%s/%s", dir, prefix);
    for (unsigned long i = 0; i < n; i++) {
        char digits[24];
        int k = 0;
        unsigned long v = i;
        do digits[k++] = (char)('0' + v % 10); while ((v /= 10) != 0);
        size_t at = kept;
        while (k > 0) path[at++] = digits[--k];
        path[at] = 0;
        double t0 = seconds();
        if (fstatat(AT_FDCWD, path, &buf, AT_SYMLINK_NOFOLLOW) != 0) {
            perror(path);
            exit(1);
        }
        spent += seconds() - t0;
    }
    return spent;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: statloop mdtest|iosurvey DIR N PREFIX\n");
        return 2;
    }
    unsigned long n = strtoul(argv[3], NULL, 10);
    double start = seconds();
    if (strcmp(argv[1], "mdtest") == 0)
        mdtest_loop(argv[2], n, argv[4]);
    else
        iosurvey_loop(argv[2], n, argv[4]);
    printf("%.6f\n", seconds() - start);
    return 0;
}
