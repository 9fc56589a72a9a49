/* meta-loop: this machine's ceiling for metadata syscalls. Nothing sits between the syscalls
 * but a name format, so the benches can tell how far iosurvey's metadata rates are from what
 * the kernel and filesystem allow.
 *
 *   gcc -O2 -pthread -o meta-loop bench/lib/meta-loop.c
 *   meta-loop DIR ITEMS THREADS file|dir [shared]
 *
 * Prints "<phase> <items> <seconds> <items/s>" for create, stat and remove. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { CREATE, STAT, REMOVE, PHASES };
static const char *phase_name[PHASES] = {"create", "stat", "remove"};

static const char *root;
static long items;
static int is_dir, shared;
static pthread_barrier_t barrier;

struct worker {
	pthread_t id;
	int t;
	struct timespec start[PHASES], end[PHASES];
};

/* _exit, not exit: another thread may fail at the same moment, and exit is not safe to race. */
static void die(const char *phase, const char *name)
{
	fprintf(stderr, "meta-loop: %s %s: %s\n", phase, name, strerror(errno));
	_exit(1);
}

static void subdir(char *buf, size_t len, int t)
{
	if (shared)
		snprintf(buf, len, "%s/shared", root);
	else
		snprintf(buf, len, "%s/t.%d", root, t);
}

/* Writes the decimal i after the fixed prefix: snprintf per item would cost a visible share
 * of a stat on tmpfs, which is what this program exists to measure. */
static void put_index(char *p, long i)
{
	char digits[24];
	int n = 0;
	do
		digits[n++] = (char)('0' + i % 10);
	while (i /= 10);
	while (n)
		*p++ = digits[--n];
	*p = '\0';
}

static int op(int phase, int dirfd, const char *name)
{
	struct stat st;
	int fd;

	switch (phase) {
	case CREATE:
		if (is_dir)
			return mkdirat(dirfd, name, 0755);
		fd = openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		return fd < 0 ? -1 : close(fd);
	case STAT:
		return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
	default:
		return unlinkat(dirfd, name, is_dir ? AT_REMOVEDIR : 0);
	}
}

static void *run(void *arg)
{
	struct worker *w = arg;
	char path[PATH_MAX], name[64];
	int dirfd, len;

	/* Opened once so each item costs one lookup in its directory, not a walk from root. */
	subdir(path, sizeof path, w->t);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		die("setup", path);
	len = snprintf(name, sizeof name, "%c.%d.", is_dir ? 'd' : 'f', w->t);

	for (int ph = 0; ph < PHASES; ph++) {
		/* All threads start a phase together, so the slowest one sets its time. */
		pthread_barrier_wait(&barrier);
		clock_gettime(CLOCK_MONOTONIC, &w->start[ph]);
		for (long i = 0; i < items; i++) {
			put_index(name + len, i);
			if (op(ph, dirfd, name) < 0)
				die(phase_name[ph], name);
		}
		clock_gettime(CLOCK_MONOTONIC, &w->end[ph]);
	}
	pthread_barrier_wait(&barrier);
	close(dirfd);
	return NULL;
}

static double secs(struct timespec ts)
{
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], *end;
	int threads;

	if (argc < 5 || argc > 6 || (argc == 6 && strcmp(argv[5], "shared") != 0) ||
	    (strcmp(argv[4], "file") != 0 && strcmp(argv[4], "dir") != 0)) {
		fprintf(stderr, "usage: meta-loop DIR ITEMS THREADS file|dir [shared]\n");
		return 2;
	}
	root = argv[1];
	items = strtol(argv[2], &end, 10);
	if (*end || items < 1) {
		fprintf(stderr, "meta-loop: ITEMS must be a positive integer\n");
		return 2;
	}
	long n = strtol(argv[3], &end, 10);
	if (*end || n < 1 || n > 4096) {
		fprintf(stderr, "meta-loop: THREADS must be 1..4096\n");
		return 2;
	}
	threads = (int)n;
	is_dir = strcmp(argv[4], "dir") == 0;
	shared = argc == 6;

	/* Made before timing: the phases measure the items, not the directories that hold them. */
	for (int t = 0; t < (shared ? 1 : threads); t++) {
		subdir(path, sizeof path, t);
		if (mkdir(path, 0755) < 0)
			die("setup", path);
	}

	struct worker *w = calloc((size_t)threads, sizeof *w);
	if (!w)
		die("setup", "calloc");
	pthread_barrier_init(&barrier, NULL, (unsigned)threads);
	for (int t = 0; t < threads; t++) {
		w[t].t = t;
		errno = pthread_create(&w[t].id, NULL, run, &w[t]);
		if (errno)
			die("setup", "pthread_create");
	}
	for (int t = 0; t < threads; t++)
		pthread_join(w[t].id, NULL);

	for (int ph = 0; ph < PHASES; ph++) {
		double first = secs(w[0].start[ph]), last = secs(w[0].end[ph]);
		for (int t = 1; t < threads; t++) {
			if (secs(w[t].start[ph]) < first)
				first = secs(w[t].start[ph]);
			if (secs(w[t].end[ph]) > last)
				last = secs(w[t].end[ph]);
		}
		long total = items * threads;
		printf("%s %ld %.6f %.1f\n", phase_name[ph], total, last - first, (double)total / (last - first));
	}

	for (int t = 0; t < (shared ? 1 : threads); t++) {
		subdir(path, sizeof path, t);
		if (rmdir(path) < 0)
			die("cleanup", path);
	}
	free(w);
	return 0;
}
