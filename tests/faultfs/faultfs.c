/*
 * faultfs: a pass-through FUSE file system that fails I/O on demand.
 *
 *   faultfs BACKING MOUNTPOINT [fuse options]
 *
 * Every operation on MOUNTPOINT is forwarded to the same relative path under
 * BACKING. The fault is configured once, from the environment, at mount time
 * (see README.md): which errno, which operation, after how many bytes, on
 * which file names, and optionally armed only while a control file exists.
 *
 * All backing calls use the *at() family relative to a descriptor of
 * BACKING, so nothing depends on the working directory (fuse_main chdirs to
 * "/" when it daemonizes).
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE

#include <fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

enum op { OP_WRITE = 1, OP_READ = 2, OP_FSYNC = 4, OP_FALLOCATE = 8 };
static const char *op_name(enum op o)
{
	return o == OP_WRITE ? "write" : o == OP_READ ? "read"
	     : o == OP_FSYNC ? "fsync" : "fallocate";
}

/* Fault configuration (read-only after main) and state (under lock). */
static int backing_fd = -1;
static int fault_errno;           /* 0: pure pass-through */
static unsigned fault_ops;        /* set of enum op that fail */
static unsigned counted_ops;      /* ops whose bytes advance the counter */
static uint64_t fault_after;      /* bytes allowed through before failing */
static const char *fault_match;   /* basename substring, NULL = all */
static char *control_path;        /* armed only while this exists, NULL = always */
static unsigned delay_ms;         /* each matching write waits this long: a slow server */
static const char *delay_mark;    /* made when a delayed write starts waiting, NULL = none */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t moved;            /* bytes counted since arming */
static bool tripped;              /* sticky: once failing, keep failing */

/* Per-open state. Whether a file matches FAULTFS_MATCH is decided at open,
 * so later renames (or FUSE's .fuse_hidden rename on unlink) do not change
 * it, and mmap writeback, which arrives via this handle, is matched too. */
struct ffile {
	int fd;
	bool match;
};
#define FF(fi) ((struct ffile *)(uintptr_t)(fi)->fh)

/* FUSE paths are absolute ("/a/b"); the *at() calls want them relative. */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static bool name_matches(const char *path)
{
	const char *base = strrchr(path, '/');
	return !fault_match || strstr(base ? base + 1 : path, fault_match);
}

/*
 * Decide whether an operation of kind `o` on `f` moving `bytes` fails.
 * Returns 0 to let it through (and counts its bytes), or -errno.
 * The fault trips when a request would take the counter past
 * FAULTFS_AFTER_BYTES (fsync, which moves nothing itself, trips once the
 * counter has reached it); from then on every targeted op fails.
 */
static int fault_check(enum op o, const struct ffile *f, uint64_t bytes)
{
	int ret = 0;

	if (!fault_errno || !f->match || !((fault_ops | counted_ops) & o))
		return 0;
	pthread_mutex_lock(&lock);
	/* Checked on every call so a test can arm/disarm mid-run; disarming
	 * resets the count so AFTER_BYTES is measured from each arming. */
	if (control_path && access(control_path, F_OK) != 0) {
		moved = 0;
		tripped = false;
		goto out;
	}
	if ((fault_ops & o) && !tripped &&
	    (bytes ? moved + bytes > fault_after : moved >= fault_after)) {
		tripped = true;
		fprintf(stderr, "faultfs: tripped: %s fails with errno %d after %llu bytes\n",
			op_name(o), fault_errno, (unsigned long long)moved);
	}
	if (tripped && (fault_ops & o))
		ret = -fault_errno;
	else if (counted_ops & o)
		moved += bytes;
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

/* ---- namespace operations: plain forwarding ---- */

static int ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int r = fi ? fstat(FF(fi)->fd, st)
		   : fstatat(backing_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
	return r ? -errno : 0;
}

static int ff_access(const char *path, int mask)
{
	return faccessat(backing_fd, rel(path), mask, 0) ? -errno : 0;
}

static int ff_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n = readlinkat(backing_fd, rel(path), buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	int fd = openat(backing_fd, rel(path), O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	/* Offset 0 to the filler: libfuse buffers the whole listing for us. */
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st = { .st_ino = e->d_ino, .st_mode = DTTOIF(e->d_type) };
		if (fill(buf, e->d_name, &st, 0, 0))
			break;
	}
	closedir(d);
	return 0;
}

static int ff_mkdir(const char *path, mode_t mode)
{
	return mkdirat(backing_fd, rel(path), mode) ? -errno : 0;
}

static int ff_rmdir(const char *path)
{
	return unlinkat(backing_fd, rel(path), AT_REMOVEDIR) ? -errno : 0;
}

static int ff_unlink(const char *path)
{
	return unlinkat(backing_fd, rel(path), 0) ? -errno : 0;
}

static int ff_symlink(const char *target, const char *path)
{
	return symlinkat(target, backing_fd, rel(path)) ? -errno : 0;
}

static int ff_link(const char *from, const char *to)
{
	return linkat(backing_fd, rel(from), backing_fd, rel(to), 0) ? -errno : 0;
}

static int ff_rename(const char *from, const char *to, unsigned int flags)
{
	return renameat2(backing_fd, rel(from), backing_fd, rel(to), flags) ? -errno : 0;
}

static int ff_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int r = fi ? fchmod(FF(fi)->fd, mode) : fchmodat(backing_fd, rel(path), mode, 0);
	return r ? -errno : 0;
}

static int ff_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	int r = fi ? fchown(FF(fi)->fd, uid, gid)
		   : fchownat(backing_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
	return r ? -errno : 0;
}

static int ff_utimens(const char *path, const struct timespec ts[2],
		      struct fuse_file_info *fi)
{
	int r = fi ? futimens(FF(fi)->fd, ts)
		   : utimensat(backing_fd, rel(path), ts, AT_SYMLINK_NOFOLLOW);
	return r ? -errno : 0;
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (fi)
		return ftruncate(FF(fi)->fd, size) ? -errno : 0;
	int fd = openat(backing_fd, rel(path), O_WRONLY);
	if (fd < 0)
		return -errno;
	int r = ftruncate(fd, size) ? -errno : 0;
	close(fd);
	return r;
}

static int ff_statfs(const char *path, struct statvfs *sv)
{
	return fstatvfs(backing_fd, sv) ? -errno : 0;
}

/* ---- file operations ---- */

/*
 * O_DIRECT is dropped from the backing open: the kernel still honours it on
 * the FUSE side (its own direct-I/O path, which bypasses the page cache), but
 * libfuse hands us buffers that need not be aligned, which the backing file
 * system would reject with EINVAL. We do not set fi->direct_io, so mmap keeps
 * working for every file.
 */
static int open_common(const char *path, struct fuse_file_info *fi, int flags, mode_t mode)
{
	struct ffile *f = malloc(sizeof *f);
	if (!f)
		return -ENOMEM;
	f->fd = openat(backing_fd, rel(path), flags & ~O_DIRECT, mode);
	if (f->fd < 0) {
		int e = errno;
		free(f);
		return -e;
	}
	f->match = name_matches(path);
	fi->fh = (uintptr_t)f;
	return 0;
}

static int ff_open(const char *path, struct fuse_file_info *fi)
{
	return open_common(path, fi, fi->flags, 0);
}

static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return open_common(path, fi, fi->flags | O_CREAT, mode);
}

static int ff_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	ssize_t n = pread(FF(fi)->fd, buf, size, off);
	if (n < 0)
		return -errno;
	/* Checked after the read, so that what counts is bytes actually
	 * returned (readahead often asks beyond end of file). */
	int r = fault_check(OP_READ, FF(fi), n);
	return r ? r : (int)n;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	/* Checked before: a failed write leaves the backing file untouched,
	 * as a real ENOSPC/EDQUOT would. */
	int r = fault_check(OP_WRITE, FF(fi), size);
	if (r)
		return r;
	if (delay_ms && FF(fi)->match) {
		if (delay_mark) {
			int m = open(delay_mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (m >= 0)
				close(m);
		}
		usleep(delay_ms * 1000u);
	}
	ssize_t n = pwrite(FF(fi)->fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int ff_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	int r = fault_check(OP_FALLOCATE, FF(fi), len);
	if (r)
		return r;
	return fallocate(FF(fi)->fd, mode, off, len) ? -errno : 0;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int r = fault_check(OP_FSYNC, FF(fi), 0);
	if (r)
		return r;
	r = datasync ? fdatasync(FF(fi)->fd) : fsync(FF(fi)->fd);
	return r ? -errno : 0;
}

/* Called on every close(2) of a descriptor; closing a duplicate surfaces any
 * error the backing file system reports at close without giving up the fd. */
static int ff_flush(const char *path, struct fuse_file_info *fi)
{
	int fd = dup(FF(fi)->fd);
	if (fd < 0)
		return -errno;
	return close(fd) ? -errno : 0;
}

static int ff_release(const char *path, struct fuse_file_info *fi)
{
	close(FF(fi)->fd);
	free(FF(fi));
	return 0;
}

/* Each open has its own backing descriptor, so flock on it has the same
 * per-open-file semantics as on the mount. */
static int ff_flock(const char *path, struct fuse_file_info *fi, int op)
{
	return flock(FF(fi)->fd, op) ? -errno : 0;
}

static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->use_ino = 1; /* show the backing inode numbers */
	return NULL;
}

static const struct fuse_operations ff_ops = {
	.init = ff_init,
	.getattr = ff_getattr,   .access = ff_access,   .readlink = ff_readlink,
	.readdir = ff_readdir,   .mkdir = ff_mkdir,     .rmdir = ff_rmdir,
	.unlink = ff_unlink,     .symlink = ff_symlink, .link = ff_link,
	.rename = ff_rename,     .chmod = ff_chmod,     .chown = ff_chown,
	.utimens = ff_utimens,   .truncate = ff_truncate, .statfs = ff_statfs,
	.open = ff_open,         .create = ff_create,   .read = ff_read,
	.write = ff_write,       .fallocate = ff_fallocate, .fsync = ff_fsync,
	.flush = ff_flush,       .release = ff_release, .flock = ff_flock,
};

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "faultfs: %s%s\n", msg, arg ? arg : "");
	exit(2);
}

/* Read the fault settings; a typo must not silently mean "no fault". */
static void configure(void)
{
	const char *s;
	char *end;

	if ((s = getenv("FAULTFS_ERRNO")) && *s) {
		long e = strtol(s, &end, 10);
		if (*end || e <= 0 || e > 4095)
			die("bad FAULTFS_ERRNO: ", s);
		fault_errno = (int)e;
	}
	s = getenv("FAULTFS_OP");
	if (!s || !*s || !strcmp(s, "any"))
		fault_ops = OP_WRITE | OP_READ | OP_FSYNC | OP_FALLOCATE;
	else if (!strcmp(s, "write"))     fault_ops = OP_WRITE;
	else if (!strcmp(s, "read"))      fault_ops = OP_READ;
	else if (!strcmp(s, "fsync"))     fault_ops = OP_FSYNC;
	else if (!strcmp(s, "fallocate")) fault_ops = OP_FALLOCATE;
	else
		die("bad FAULTFS_OP (write|read|fsync|fallocate|any): ", s);
	/* fsync moves no bytes, so "fsync after N bytes" counts bytes written. */
	counted_ops = (fault_ops & ~OP_FSYNC) | (fault_ops & OP_FSYNC ? OP_WRITE : 0);

	if ((s = getenv("FAULTFS_AFTER_BYTES")) && *s) {
		errno = 0;
		fault_after = strtoull(s, &end, 10);
		if (*end || errno || *s == '-')
			die("bad FAULTFS_AFTER_BYTES: ", s);
	}
	if ((s = getenv("FAULTFS_MATCH")) && *s)
		fault_match = s;
	if ((s = getenv("FAULTFS_DELAY_MS")) && *s) {
		unsigned long d = strtoul(s, &end, 10);
		if (*end || d > 600000)
			die("bad FAULTFS_DELAY_MS: ", s);
		delay_ms = (unsigned)d;
	}
	if ((s = getenv("FAULTFS_DELAY_MARK")) && *s) {
		/* The daemon later chdirs to "/". */
		if (*s != '/')
			die("FAULTFS_DELAY_MARK must be an absolute path: ", s);
		delay_mark = s;
	}
	if ((s = getenv("FAULTFS_CONTROL")) && *s) {
		/* Made absolute now: the daemon later chdirs to "/". */
		char cwd[PATH_MAX];
		if (*s != '/' && getcwd(cwd, sizeof cwd)) {
			if (asprintf(&control_path, "%s/%s", cwd, s) < 0)
				die("out of memory", NULL);
		} else {
			control_path = strdup(s);
		}
	}
}

int main(int argc, char *argv[])
{
	if (argc < 3 || argv[1][0] == '-')
		die("usage: faultfs BACKING MOUNTPOINT [fuse options]", NULL);
	const char *backing = argv[1];
	configure();
	backing_fd = open(backing, O_RDONLY | O_DIRECTORY);
	if (backing_fd < 0)
		die("cannot open backing directory: ", backing);
	if (fault_errno)
		fprintf(stderr, "faultfs: errno %d on %s after %llu bytes, match %s, control %s\n",
			fault_errno, getenv("FAULTFS_OP") ? getenv("FAULTFS_OP") : "any",
			(unsigned long long)fault_after, fault_match ? fault_match : "(all)",
			control_path ? control_path : "(always armed)");

	/* Hand libfuse "faultfs [our -o] MOUNTPOINT [options]", i.e. drop
	 * BACKING, and name the mount after it so df and /proc/mounts show what
	 * is behind it (ours first so a user's own -o fsname= wins; skipped if
	 * the path would need escaping in a -o list). */
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	char *opt = NULL;
	if (!strpbrk(backing, ",\\") && asprintf(&opt, "-ofsname=%s", backing) < 0)
		die("out of memory", NULL);
	bool ok = fuse_opt_add_arg(&args, argv[0]) == 0 &&
		  fuse_opt_add_arg(&args, "-osubtype=faultfs") == 0 &&
		  (!opt || fuse_opt_add_arg(&args, opt) == 0);
	for (int i = 2; ok && i < argc; i++)
		ok = fuse_opt_add_arg(&args, argv[i]) == 0;
	if (!ok)
		die("out of memory", NULL);
	free(opt);
	int r = fuse_main(args.argc, args.argv, &ff_ops, NULL);
	fuse_opt_free_args(&args);
	return r;
}
