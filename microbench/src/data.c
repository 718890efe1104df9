/*
 * data.c - data benchmarks (Tang 4.1.3, Park and Lipton): read, allocating write,
 * overwrite (a partial-block size makes it a read-modify-write), append, the kinds of
 * sync a program makes (after a write that allocated, after a rewrite in place, with
 * nothing dirty, of a directory after a file was made in it), and copying a whole file in
 * the kernel (copy_file_range).
 * Sequential, random and forward use the same pread/pwrite calls and
 * differ only in offsets (Wang et al.); random and forward offsets are block-aligned slots
 * (forward reads a random sample of them in ascending order); buffers
 * come from posix_memalign so O_DIRECT and the CPU see the same alignment every time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench.h"
#include "mapped.h"
#include "tree.h"

enum { FILL_CHUNK = 1 << 20 };

static const char READ_FILE[] = "read.dat";
static const char OVERWRITE_FILE[] = "overwrite.dat";
static const char WRITE_FILE[] = "write.dat";
static const char FORWARD_FILE[] = "forward.dat";
/* The forward file's size where --file-size is smaller and the filesystem has room. */
static const uint64_t FORWARD_FILE_BYTES = 256ULL << 20;

uint64_t data_offset(const struct bench_ctx *ctx, size_t i)
{
	size_t span = ctx->pass_span ? ctx->pass_span : ctx->n;
	size_t slot = (ctx->pass * ctx->n + i) % span;

	if (ctx->c->order == ORDER_SEQ)
		return (uint64_t)slot * ctx->c->size;
	return (uint64_t)ctx->order[slot] * ctx->stride;
}

static int open_flags(const struct bench_ctx *ctx, int flags)
{
	return flags | O_CLOEXEC | (ctx->c->cache == CACHE_DIRECT ? O_DIRECT : 0);
}

uint64_t buffer_bytes(const struct bench_ctx *ctx)
{
	enum size_sweep sweep = ctx->c->bench->sweep;
	const uint64_t *mix = sweep == SWEEP_MIX ? ctx->cfg->file_sizes
			    : sweep == SWEEP_MIX_REQUESTS ? ctx->cfg->request_sizes : NULL;
	size_t nmix = sweep == SWEEP_MIX ? ctx->cfg->nfile_sizes
		    : sweep == SWEEP_MIX_REQUESTS ? ctx->cfg->nrequest_sizes : 0;
	uint64_t largest = ctx->c->size;

	for (size_t i = 0; i < nmix; i++)
		if (mix[i] > largest)
			largest = mix[i];
	return largest;
}

void fill_write_buffer(struct bench_ctx *ctx)
{
	uint64_t largest = buffer_bytes(ctx);

	ctx->buf = xaligned(4096, largest ? largest : 1);
	memset(ctx->buf, 0x5a, largest);
}

/* Operations one repetition can make in a file of `bytes`, capped by --ops; the order
 * holds every slot of the file, so later passes can go on through it (setup_read). */
static void size_ops(struct bench_ctx *ctx, uint64_t bytes)
{
	uint64_t size = ctx->c->size, d = ctx->cfg->block_size;
	uint64_t slots;

	ctx->stride = (size + d - 1) / d * d;
	slots = ctx->c->order == ORDER_SEQ ? bytes / size : bytes / ctx->stride;
	if (ctx->c->order == ORDER_FORWARD) {
		/* A whole stream of FORWARD_READS (or --ops, if more), as many as the file holds
		 * on average; the runner draws it from the file's start (make_forward_stream). */
		uint64_t fit = bytes / (ctx->stride + ctx->c->gap);
		size_t stream = ctx->cfg->ops > FORWARD_READS ? ctx->cfg->ops : FORWARD_READS;

		ctx->n = ctx->stream_reads = fit < stream ? (size_t)fit : stream;
		ctx->norder = (size_t)slots;
	} else {
		ctx->n = slots < ctx->cfg->ops ? (size_t)slots : ctx->cfg->ops;
		ctx->norder = (size_t)slots;
	}
	ctx->buf = xaligned(4096, ctx->stride);
	memset(ctx->buf, 0x5a, ctx->stride);
}

/* Write `bytes` of fd (`name`, for messages) from its start, sequentially, `chunk` bytes a
 * request. */
static int lay_out(int fd, const char *name, uint64_t bytes, size_t chunk)
{
	unsigned char *buf = xaligned(4096, chunk);
	int rc = 0;

	memset(buf, 0xa5, chunk);
	for (uint64_t off = 0; off < bytes && rc == 0; off += chunk) {
		size_t len = bytes - off < chunk ? (size_t)(bytes - off) : chunk;

		if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
			rc = fail_errno("pwrite (laying out)", name);
	}
	free(buf);
	return rc;
}

/* Write a file of `bytes` once, sequentially, and make it durable; reused across cases. */
static int fill_shared_file(const struct bench_ctx *ctx, const char *name, uint64_t bytes)
{
	struct stat st;
	int fd, rc;

	if (fstatat(ctx->cfg->shared_fd, name, &st, 0) == 0 && (uint64_t)st.st_size == bytes)
		return 0;
	fd = openat(ctx->cfg->shared_fd, name, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail_errno("openat(O_CREAT)", name);
	rc = lay_out(fd, name, bytes, FILL_CHUNK);
	if (rc == 0 && fsync(fd) != 0)
		rc = fail_errno("fsync", name);
	close(fd);
	return rc;
}

/* Open the file the case reads or rewrites (at `dirfd`, or absolute) and size its operations. */
static int open_existing(struct bench_ctx *ctx, int dirfd, const char *name, int flags)
{
	struct stat st;

	ctx->fd = openat(dirfd, name, open_flags(ctx, flags));
	if (ctx->fd < 0)
		return fail_errno("openat", ctx->path);
	if (fstat(ctx->fd, &st) != 0)
		return fail_errno("fstat", ctx->path);
	ctx->file_bytes = (uint64_t)st.st_size;
	size_ops(ctx, ctx->file_bytes);
	return 0;
}

static int open_shared(struct bench_ctx *ctx, const char *name, int flags)
{
	snprintf(ctx->path, sizeof(ctx->path), "%s/shared/%s", ctx->cfg->workdir, name);
	return open_existing(ctx, ctx->cfg->shared_fd, name, flags);
}

/*
 * Forward reads need a long file: readahead's window grows along a stream of sorted
 * lookups, so 950 reads 64 KiB apart cost ext4 about 55 us each and 3700 about 41 (the
 * 4000 lookups of an SQL IN list cost the same 41).  Their file is 256 MiB where
 * --file-size is smaller, as far as half the filesystem's free space allows (counting the
 * file itself, once made, as free, so every forward case finds the same size).
 */
static uint64_t forward_file_bytes(const struct bench_ctx *ctx)
{
	uint64_t room, bytes = FORWARD_FILE_BYTES;
	struct statvfs sv;
	struct stat st;

	if (ctx->cfg->file_size >= bytes || fstatvfs(ctx->cfg->shared_fd, &sv) != 0)
		return ctx->cfg->file_size;
	room = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (fstatat(ctx->cfg->shared_fd, FORWARD_FILE, &st, 0) == 0)
		room += (uint64_t)st.st_size;
	room = room / 2 / (1 << 20) * (1 << 20);
	if (room < bytes)
		bytes = room;
	return bytes > ctx->cfg->file_size ? bytes : ctx->cfg->file_size;
}

/*
 * A warm read's later passes read on through the whole file rather than the same n
 * blocks again: n blocks (1 MiB in a quick run) stay in the CPU's caches, and a page-cache
 * hit was priced at a third of what a program reading a file of its own pays (534 ns
 * against 1.6 us for 4 KiB on tmpfs; fio's random reads over the file take 1.3 us).
 * Rewrites go on through the file too (setup_rewrite).
 */
static int setup_read(struct bench_ctx *ctx)
{
	int rc;

	if (!ctx->cfg->data_file) {
		int forward = ctx->c->order == ORDER_FORWARD;
		const char *name = forward ? FORWARD_FILE : READ_FILE;

		if (fill_shared_file(ctx, name, forward ? forward_file_bytes(ctx) : ctx->cfg->file_size) != 0)
			return -1;
		rc = open_shared(ctx, name, O_RDONLY);
	} else {
		/* A file the caller provided (e.g. the one fio reads in bench/): only ever read. */
		snprintf(ctx->path, sizeof(ctx->path), "%s", ctx->cfg->data_file);
		rc = open_existing(ctx, AT_FDCWD, ctx->cfg->data_file, O_RDONLY);
	}
	ctx->pass_span = ctx->norder;
	return rc;
}

static int setup_overwrite(struct bench_ctx *ctx)
{
	if (fill_shared_file(ctx, OVERWRITE_FILE, ctx->cfg->file_size) != 0)
		return -1;
	return open_shared(ctx, OVERWRITE_FILE, O_RDWR);
}

/*
 * A warm rewrite's later passes go on through the whole file, as a warm read's do
 * (setup_read): the same n blocks rewritten again were dirty already and stayed in the
 * CPU's caches, which priced a database's rewrite of a page at a third of its cost (0.4
 * against 1.3-1.5 us for 4 KiB on ext4 and xfs, this machine).
 */
static int setup_rewrite(struct bench_ctx *ctx)
{
	if (setup_overwrite(ctx) != 0)
		return -1;
	ctx->pass_span = ctx->norder;
	return 0;
}

/*
 * Each pass of a warm rewrite starts with every page clean: the last pass's are made
 * durable (untimed).  A database syncs the pages a transaction rewrote before the next
 * one; left dirty, thousands of scattered pages make btrfs flush its delayed allocations
 * from inside the writes (a mean of 25-40 us a 4 KiB rewrite against 2.5-3.5 us synced
 * every 300, this machine).
 */
static int sync_pass(struct bench_ctx *ctx)
{
	return fdatasync(ctx->fd) == 0 ? 0 : fail_errno("fdatasync", ctx->path);
}

/* A new, empty file every repetition: writes allocate blocks as they go. */
static int setup_new_file(struct bench_ctx *ctx, int flags)
{
	snprintf(ctx->path, sizeof(ctx->path), "%s", WRITE_FILE);
	ctx->fd = openat(ctx->dirfd, WRITE_FILE, open_flags(ctx, O_CREAT | O_TRUNC | O_WRONLY | flags), 0644);
	if (ctx->fd < 0)
		return fail_errno("openat(O_CREAT)", WRITE_FILE);
	ctx->file_bytes = 0;
	size_ops(ctx, ctx->cfg->file_size);
	return 0;
}

static int setup_write(struct bench_ctx *ctx) { return setup_new_file(ctx, 0); }
static int setup_append(struct bench_ctx *ctx) { return setup_new_file(ctx, O_APPEND); }

/*
 * append_mix: appends that cycle through a workload's own request sizes (--file-sizes), as
 * SQLite journals a page: 4 bytes, 4,096 bytes, 4 bytes, so that most pages straddle a page
 * boundary.  fsbench's write at each size alone ranks such appends wrongly between
 * filesystems (docs/model-evidence.md, "Writes between syncs"); made as the workload makes
 * them, the straddles and the small requests cost what they cost on each.  The case's size
 * is the mix's mean.
 */
static int setup_append_mix(struct bench_ctx *ctx)
{
	if (setup_new_file(ctx, O_APPEND) != 0)
		return -1;
	free(ctx->buf); /* size_ops's, a stride of the mix's mean: too small for its largest */
	fill_write_buffer(ctx);
	return 0;
}

/*
 * A sync with nothing to write: the shared overwrite file, clean once prepare_cache_file's
 * syncfs has run.  Programs make such syncs of directories and of files synced twice
 * (SQLite's directory sync after creating its journal); what they cost is the
 * filesystem's bookkeeping and, on many, a cache flush sent to the device.
 */
static int setup_clean_sync(struct bench_ctx *ctx)
{
	if (fill_shared_file(ctx, OVERWRITE_FILE, ctx->cfg->file_size) != 0)
		return -1;
	snprintf(ctx->path, sizeof(ctx->path), "%s/shared/%s", ctx->cfg->workdir, OVERWRITE_FILE);
	ctx->fd = openat(ctx->cfg->shared_fd, OVERWRITE_FILE, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0)
		return fail_errno("openat", ctx->path);
	ctx->file_bytes = 0; /* nothing to warm or evict: only the syncfs */
	ctx->n = ctx->norder = ctx->cfg->ops;
	return 0;
}

static void teardown_file(struct bench_ctx *ctx)
{
	if (ctx->fd >= 0)
		close(ctx->fd);
	ctx->fd = -1;
	free(ctx->buf);
	ctx->buf = NULL;
}

/*
 * First write back whatever the filesystem holds dirty (an earlier case's writes), so its
 * writeback cannot throttle this case.  Then cold: the file's pages written back and
 * evicted; warm: read through once.
 */
static int prepare_cache_file(struct bench_ctx *ctx)
{
	if (syncfs(ctx->dirfd) != 0)
		return fail_errno("syncfs", ctx->cfg->target);
	if (ctx->file_bytes == 0)
		return 0;
	if (ctx->c->cache == CACHE_WARM)
		return cache_warm_file(ctx->fd, ctx->path, ctx->file_bytes);
	return cache_evict_file(ctx->fd, ctx->path);
}

/*
 * A rewrite's warm state is the one a program leaves in pages it wrote a block at a time
 * and synced, as a database does its pages: every block cached, clean, and in a page of
 * its own.  The file is written back and evicted, written again a block at a time, and
 * synced.  Read back instead, readahead caches it in large folios, and on ext4 a 4 KiB
 * rewrite into a clean one costs about three times as much (4.5 against 1.5 us, this
 * machine), and so does writing it back: an fdatasync of 327 KiB rewritten in a file of
 * pages took 250-290 us, in one read back 150-180 (ext4 and xfs).  What a rewrite and its
 * sync cost depends on how the file came into the cache; these cases price the database's
 * way.
 */
static int prepare_rewritten_file(struct bench_ctx *ctx)
{
	if (ctx->c->cache != CACHE_WARM)
		return prepare_cache_file(ctx);
	if (syncfs(ctx->dirfd) != 0)
		return fail_errno("syncfs", ctx->cfg->target);
	if (cache_evict_file(ctx->fd, ctx->path) != 0 ||
	    lay_out(ctx->fd, ctx->path, ctx->file_bytes, ctx->cfg->block_size) != 0)
		return -1;
	return fdatasync(ctx->fd) == 0 ? 0 : fail_errno("fdatasync", ctx->path);
}

static int check_transfer(ssize_t done, uint64_t want, const char *what, const char *path)
{
	if (done == (ssize_t)want)
		return 0;
	if (done < 0)
		return fail_errno(what, path);
	return fail_msg("%s(%s): short transfer, %zd of %llu bytes", what, path, done,
			(unsigned long long)want);
}

static int run_pread(struct bench_ctx *ctx, size_t i)
{
	ssize_t n = pread(ctx->fd, ctx->buf, ctx->c->size, (off_t)data_offset(ctx, i));

	return check_transfer(n, ctx->c->size, "pread", ctx->path);
}

/* One request of `len` bytes of the case's buffer at `at`. */
static int write_at(struct bench_ctx *ctx, uint64_t at, uint64_t len)
{
	return check_transfer(pwrite(ctx->fd, ctx->buf, (size_t)len, (off_t)at), len, "pwrite", ctx->path);
}

static int run_pwrite(struct bench_ctx *ctx, size_t i)
{
	return write_at(ctx, data_offset(ctx, i), ctx->c->size);
}

/*
 * The bytes a sync makes durable, written at `at` as the workload wrote them: one request of
 * `bytes`, or, given its request sizes (--request-sizes), requests cycling through them.
 * How they were written decides the pages the cache holds them in: written a page at a
 * time they stay in pages of their own, in one large request they go into large folios,
 * and on ext4 and xfs a sync of a new file's 327 KiB written 4 KiB at a time took 1.3-1.4
 * times one written in one request (470-520 against 340-375 us, this machine; btrfs the
 * same either way).
 */
static int write_as_requested(struct bench_ctx *ctx, uint64_t at, uint64_t bytes)
{
	uint64_t done = 0;

	for (size_t k = 0; done < bytes; k++) {
		uint64_t len = ctx->cfg->nrequest_sizes ? request_size(ctx->cfg, k) : bytes;

		if (len > bytes - done)
			len = bytes - done;
		if (write_at(ctx, at + done, len) != 0)
			return -1;
		done += len;
	}
	return 0;
}

/* A sync's new bytes: the case's size, appended where the last ended. */
static int run_synced_write(struct bench_ctx *ctx, size_t i)
{
	return write_as_requested(ctx, data_offset(ctx, i), ctx->c->size);
}

/*
 * The rewrite a data-only sync makes durable.  Sequential: the case's size in one place,
 * written as the workload wrote it (write_as_requested).  Random: as many single blocks
 * (or requests of the workload's sizes), each at a block drawn anywhere in the file, as a
 * database rewrites the pages a transaction changed.  Written back, they are as many
 * separate writes to the device: on the val images an fdatasync after 50 scattered 4 KiB
 * pages took 2-3 times one after a 200 KiB request on ext4 and xfs, and 1.3-2 times on
 * btrfs.
 */
static int run_rewrite(struct bench_ctx *ctx, size_t i)
{
	uint64_t d = ctx->cfg->block_size, blocks = ctx->file_bytes / d;
	struct rng r;

	if (ctx->c->order == ORDER_SEQ || blocks == 0)
		return write_as_requested(ctx, data_offset(ctx, i), ctx->c->size);
	rng_seed(&r, ctx->cfg->seed ^ ((uint64_t)(ctx->pass * ctx->n + i) * 0x9e3779b97f4a7c15ULL));
	for (uint64_t done = 0, k = 0; done < ctx->c->size; k++) {
		uint64_t len = ctx->cfg->nrequest_sizes ? request_size(ctx->cfg, k) : d;
		uint64_t span, at;

		if (len > ctx->c->size - done)
			len = ctx->c->size - done;
		span = (len + d - 1) / d;
		at = rng_next(&r) % (blocks > span ? blocks - span + 1 : 1) * d;
		if (write_at(ctx, at, len) != 0)
			return -1;
		done += len;
	}
	return 0;
}

/* A region read through a mapping: the page faults git's hashing or ripgrep's search make. */
static int run_mmap_read(struct bench_ctx *ctx, size_t i)
{
	if (read_mapped(ctx->fd, data_offset(ctx, i), ctx->c->size) != 0)
		return fail_errno("mmap", ctx->path);
	return 0;
}

static int run_append(struct bench_ctx *ctx, size_t i)
{
	ssize_t n = write(ctx->fd, ctx->buf, ctx->c->size);

	(void)i;
	return check_transfer(n, ctx->c->size, "write(O_APPEND)", ctx->path);
}

static int run_append_mix(struct bench_ctx *ctx, size_t i)
{
	uint64_t size = ctx->cfg->file_sizes[i % ctx->cfg->nfile_sizes];
	ssize_t n = write(ctx->fd, ctx->buf, size);

	return check_transfer(n, size, "write(O_APPEND)", ctx->path);
}

/* variant 0: fsync, 1: fdatasync.  The write before it, if any, is untimed (before_one). */
static int run_sync(struct bench_ctx *ctx, size_t i)
{
	int rc = ctx->c->bench->variant ? fdatasync(ctx->fd) : fsync(ctx->fd);

	(void)i;
	return rc == 0 ? 0 : fail_errno(ctx->c->bench->variant ? "fdatasync" : "fsync", ctx->path);
}

/*
 * A directory's sync after a file was made in it and synced (SQLite's journal: create,
 * write, fdatasync the file, then fsync the directory so the name survives a crash).
 * Where a journal commit carried the new name with the file (ext4, xfs) this costs next
 * to nothing; btrfs logs the directory on its own.
 */
static int setup_directory_sync(struct bench_ctx *ctx)
{
	snprintf(ctx->path, sizeof(ctx->path), "%s (the case's directory)", ctx->cfg->workdir);
	ctx->file_bytes = 0;
	ctx->n = ctx->norder = ctx->cfg->ops;
	ctx->buf = xaligned(4096, 4096);
	memset(ctx->buf, 0x6b, 4096);
	return 0;
}

static int make_synced_file(struct bench_ctx *ctx, size_t i)
{
	char name[32];
	int fd, rc;

	snprintf(name, sizeof(name), "j%zu", i);
	fd = openat(ctx->dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail_errno("openat(O_CREAT)", name);
	rc = check_transfer(pwrite(fd, ctx->buf, 4096, 0), 4096, "pwrite", name);
	if (rc == 0 && fdatasync(fd) != 0)
		rc = fail_errno("fdatasync", name);
	close(fd);
	return rc;
}

static int run_directory_sync(struct bench_ctx *ctx, size_t i)
{
	(void)i;
	return fsync(ctx->dirfd) == 0 ? 0 : fail_errno("fsync (directory)", ctx->path);
}

/*
 * copy: one whole file of the case's size copied into a new file with copy_file_range,
 * as cp does.  Where the filesystem shares extents (xfs with reflink, btrfs) the kernel
 * clones the file; elsewhere it reads and writes it, so what this costs is the
 * filesystem's answer, not ours.  Sources are Tang App. C leaves "s" written once; each
 * copy goes to the leaf "c" beside its source, made before and removed after the timed
 * call.  The source files take at most a quarter of --file-size, and there is always one:
 * a copy's size is a whole file's, and may be larger than a request (fsbench.c).
 */
static int setup_copy(struct bench_ctx *ctx)
{
	uint64_t size = ctx->c->size, budget = ctx->cfg->file_size / 4 / size;
	char path[TREE_PATH_MAX];
	int rc = 0;

	ctx->n = ctx->norder = budget < ctx->cfg->ops ? (size_t)(budget ? budget : 1) : ctx->cfg->ops;
	tree_init(&ctx->tree, ctx->n);
	if (tree_make_dirs(&ctx->tree, ctx->dirfd) != 0)
		return -1;
	for (size_t i = 0; i < ctx->n && rc == 0; i++) {
		int fd;

		tree_leaf_path(&ctx->tree, i, "s", path, sizeof(path));
		fd = openat(ctx->dirfd, path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			return fail_errno("openat(O_CREAT)", path);
		rc = lay_out(fd, path, size, size < FILL_CHUNK ? (size_t)size : FILL_CHUNK);
		close(fd);
	}
	if (rc == 0 && syncfs(ctx->dirfd) != 0)
		rc = fail_errno("syncfs", ctx->cfg->target);
	return rc;
}

/* Cold: every source's pages written back and evicted; warm: every source read through. */
static int prepare_cache_copy(struct bench_ctx *ctx)
{
	char path[TREE_PATH_MAX];
	int rc = 0;

	if (syncfs(ctx->dirfd) != 0)
		return fail_errno("syncfs", ctx->cfg->target);
	for (size_t i = 0; i < ctx->n && rc == 0; i++) {
		int fd;

		tree_leaf_path(&ctx->tree, i, "s", path, sizeof(path));
		fd = openat(ctx->dirfd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail_errno("openat", path);
		rc = ctx->c->cache == CACHE_WARM ? cache_warm_file(fd, path, ctx->c->size) : cache_evict_file(fd, path);
		close(fd);
	}
	return rc;
}

/* Untimed: open the source (ctx->fd) and make the empty destination (ctx->pending_fd). */
static int open_copy_pair(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	tree_leaf_path(&ctx->tree, ctx->order[i], "s", path, sizeof(path));
	ctx->fd = openat(ctx->dirfd, path, O_RDONLY | O_CLOEXEC);
	if (ctx->fd < 0)
		return fail_errno("openat", path);
	tree_leaf_path(&ctx->tree, ctx->order[i], "c", ctx->path, TREE_PATH_MAX);
	ctx->pending_fd = openat(ctx->dirfd, ctx->path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	return ctx->pending_fd < 0 ? fail_errno("openat(O_CREAT)", ctx->path) : 0;
}

static int run_copy(struct bench_ctx *ctx, size_t i)
{
	uint64_t left = ctx->c->size;

	(void)i;
	while (left > 0) {
		ssize_t n = copy_file_range(ctx->fd, NULL, ctx->pending_fd, NULL, left, 0);

		if (n <= 0)
			return n < 0 ? fail_errno("copy_file_range", ctx->path)
				     : fail_msg("copy_file_range(%s): source ended early", ctx->path);
		left -= (uint64_t)n;
	}
	return 0;
}

/* Untimed: close both and remove the copy, so every copy makes a new file. */
static int remove_copy(struct bench_ctx *ctx, size_t i)
{
	(void)i;
	close(ctx->fd);
	close(ctx->pending_fd);
	ctx->fd = ctx->pending_fd = -1;
	return unlinkat(ctx->dirfd, ctx->path, 0) == 0 ? 0 : fail_errno("unlinkat", ctx->path);
}

#define SEQ_AND_RANDOM (ORDER_SEQ | ORDER_RANDOM)

const struct bench data_benches[] = {
	{ "read", FAMILY_DATA, "read", "reading an existing file (pread)",
	  SEQ_AND_RANDOM | ORDER_FORWARD, CACHE_COLD | CACHE_WARM | CACHE_DIRECT, SWEEP_FULL, 1, 0,
	  setup_read, prepare_cache_file, NULL, run_pread, NULL, teardown_file, NULL, 0 },
	{ "mmap_read", FAMILY_DATA, "mmap", "reading a region through a mapping: map it, touch every page, unmap",
	  SEQ_AND_RANDOM, CACHE_COLD | CACHE_WARM, SWEEP_FULL, 1, 0,
	  setup_read, prepare_cache_file, NULL, run_mmap_read, NULL, teardown_file, NULL, 0 },
	{ "write", FAMILY_DATA, "write", "writing new blocks into an empty file, allocating as it goes (pwrite)",
	  SEQ_AND_RANDOM, CACHE_WARM | CACHE_DIRECT, SWEEP_FULL, 0, 0,
	  setup_write, prepare_cache_file, NULL, run_pwrite, NULL, teardown_file, NULL, 0 },
	{ "overwrite", FAMILY_DATA, "write", "rewriting allocated blocks in place; a partial block needs a read first (pwrite)",
	  SEQ_AND_RANDOM, CACHE_COLD | CACHE_WARM | CACHE_DIRECT, SWEEP_FULL, 1, 0,
	  setup_rewrite, prepare_rewritten_file, NULL, run_pwrite, NULL, teardown_file, sync_pass, 0 },
	{ "append", FAMILY_DATA, "write", "appending to a file opened O_APPEND (write)",
	  ORDER_SEQ, CACHE_WARM | CACHE_DIRECT, SWEEP_FULL, 0, 0,
	  setup_append, prepare_cache_file, NULL, run_append, NULL, teardown_file, NULL, 0 },
	{ "append_mix", FAMILY_DATA, "write",
	  "appends cycling through a workload's mix of request sizes (--file-sizes; size: their mean)",
	  ORDER_SEQ, CACHE_WARM, SWEEP_MIX, 0, 0,
	  setup_append_mix, prepare_cache_file, NULL, run_append_mix, NULL, teardown_file, NULL, 0 },
	{ "fsync", FAMILY_DATA, "fsync",
	  "making one just-written request durable, data and metadata (fsync); with --request-sizes, the "
	  "bytes written in the workload's requests",
	  ORDER_SEQ, CACHE_WARM, SWEEP_SYNC, 0, 0,
	  setup_write, prepare_cache_file, run_synced_write, run_sync, NULL, teardown_file, NULL, 0 },
	{ "fdatasync", FAMILY_DATA, "fsync",
	  "making one just-written request durable, data only (fdatasync); with --request-sizes, the bytes "
	  "written in the workload's requests",
	  ORDER_SEQ, CACHE_WARM, SWEEP_SYNC, 0, 1,
	  setup_write, prepare_cache_file, run_synced_write, run_sync, NULL, teardown_file, NULL, 0 },
	{ "fdatasync_overwrite", FAMILY_DATA, "fsync",
	  "making one rewrite of allocated blocks durable (fdatasync): data only, the file's size unchanged, "
	  "its pages cached as a database leaves them; random: the bytes rewritten as single blocks scattered "
	  "over the file",
	  SEQ_AND_RANDOM, CACHE_WARM, SWEEP_SYNC, 1, 1,
	  setup_overwrite, prepare_rewritten_file, run_rewrite, run_sync, NULL, teardown_file, NULL, 0 },
	{ "fsync_clean", FAMILY_DATA, "fsync", "a sync with nothing dirty to write (fsync of a clean file)",
	  ORDER_SEQ, CACHE_WARM, SWEEP_NONE, 1, 0,
	  setup_clean_sync, prepare_cache_file, NULL, run_sync, NULL, teardown_file, NULL, 0 },
	{ "fsync_dir", FAMILY_DATA, "fsync",
	  "a directory's fsync after a file was created in it and synced (a journal's name made durable)",
	  ORDER_SEQ, CACHE_WARM, SWEEP_NONE, 0, 0,
	  setup_directory_sync, prepare_cache_file, make_synced_file, run_directory_sync, NULL, teardown_file, NULL, 0 },
	{ "copy", FAMILY_DATA, "copy", "copying a whole file in the kernel: a clone where extents can be shared (copy_file_range)",
	  ORDER_SEQ, CACHE_COLD | CACHE_WARM, SWEEP_FULL, 1, 0,
	  setup_copy, prepare_cache_copy, open_copy_pair, run_copy, remove_copy, teardown_file, NULL, 0 },
};
const size_t data_bench_count = sizeof(data_benches) / sizeof(data_benches[0]);
