/*
 * meta.c - metadata benchmarks (Tang 4.1.5-4.1.6): create, unlink, mkdir, rmdir, stat of
 * files and directories, open, close, readdir, rename, link, symlink, chmod and utimes
 * (creates and unlinks also among files holding data), and the writes into files just made,
 * each on a Tang App. C hierarchy, in creation order and in a random order.
 * Every call is relative to the case directory's descriptor, so nothing outside it is
 * touched whatever the names are.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

/* One record of what getdents64 returns (the kernel's struct linux_dirent64). */
struct dirent64_record {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Entries in each directory readdir lists (Tang's cap of 100), and readdir_small's: most
 * directories a program lists hold tens of entries, and a listing's cost grows with them.
 * readdir_entries lists directories of --files entries each, about LISTED_ENTRIES in all,
 * in at least MIN_LISTINGS and at most MAX_LISTINGS directories. */
enum { READDIR_ENTRIES = TREE_FANOUT, SMALL_LISTING_ENTRIES = 10 };
enum { LISTED_ENTRIES = 40000, MIN_LISTINGS = 4, MAX_LISTINGS = 20 };

static void leaf(const struct bench_ctx *ctx, size_t i, const char *prefix, char *buf)
{
	tree_leaf_path(&ctx->tree, ctx->order[i], prefix, buf, TREE_PATH_MAX);
}

/* A new file holding `size` bytes of `buf` (none when size is 0). */
static int make_file(int dirfd, const char *path, const void *buf, uint64_t size)
{
	int fd = openat(dirfd, path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	ssize_t n = 0;

	if (fd < 0)
		return fail_errno("openat(O_CREAT)", path);
	if (size > 0)
		n = write(fd, buf, size);
	close(fd);
	if (n < 0)
		return fail_errno("write", path);
	return (uint64_t)n == size ? 0 : fail_msg("write(%s): short write of a new file", path);
}

/* The most bytes a repetition of a mix benchmark writes into its files. */
#define MIX_BYTES_PER_REP (256ULL << 20)

/* A hierarchy of ctx->cfg->files leaves whose parents exist but whose leaves do not. */
static int setup_dirs_only(struct bench_ctx *ctx)
{
	size_t files = ctx->cfg->files;

	uint64_t mean = mean_u64(ctx->cfg->file_sizes, ctx->cfg->nfile_sizes);

	/* A mix of large files: as many as MIX_BYTES_PER_REP hold, so a repetition fits the
	 * filesystem (a mix's mean of 14 MB made a thousand files overrun a 6 GiB image).  A
	 * mix's sizes are at most 64 MiB (--file-sizes), so that is four files or more. */
	if (at_mix(ctx->c->bench) && mean && files > MIX_BYTES_PER_REP / mean)
		files = MIX_BYTES_PER_REP / mean;
	tree_init(&ctx->tree, files);
	ctx->n = ctx->norder = ctx->tree.n;
	return tree_make_dirs(&ctx->tree, ctx->dirfd);
}

/* The bytes written into file i of a benchmark that writes the files it makes: the case's
 * size, or the workload's mix cycled (at_mix). */
static uint64_t written_size(const struct bench_ctx *ctx, size_t i)
{
	const struct suite_config *cfg = ctx->cfg;

	if (at_mix(ctx->c->bench) && cfg->nfile_sizes)
		return cfg->file_sizes[i % cfg->nfile_sizes];
	return ctx->c->size;
}

/* Every leaf a file: empty, or (`with_data`) holding its written_size bytes. */
static int make_leaf_files(struct bench_ctx *ctx, int with_data)
{
	char path[TREE_PATH_MAX];

	if (setup_dirs_only(ctx) != 0)
		return -1;
	for (size_t i = 0; i < ctx->tree.n; i++) {
		tree_leaf_path(&ctx->tree, i, "f", path, sizeof(path));
		if (make_file(ctx->dirfd, path, ctx->buf, with_data ? written_size(ctx, i) : 0) != 0)
			return -1;
	}
	return 0;
}

static int setup_files(struct bench_ctx *ctx) { return make_leaf_files(ctx, 0); }

static int setup_leaf_dirs(struct bench_ctx *ctx)
{
	char path[TREE_PATH_MAX];

	if (setup_dirs_only(ctx) != 0)
		return -1;
	for (size_t i = 0; i < ctx->tree.n; i++) {
		tree_leaf_path(&ctx->tree, i, "d", path, sizeof(path));
		if (mkdirat(ctx->dirfd, path, 0755) != 0)
			return fail_errno("mkdirat", path);
	}
	return 0;
}

/*
 * One whole listing of `path`: open, getdents64 until the directory is exhausted, close.
 * `listed` gets the bytes the calls returned (their records, "." and ".." included): what
 * the predictor prices a traced listing by, since a trace shows the bytes each getdents64
 * returned, not the entries.
 */
static int list_directory(int dirfd, const char *path, uint64_t *listed)
{
	char buf[32768];
	long got;
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return fail_errno("openat(O_DIRECTORY)", path);
	*listed = 0;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		*listed += (uint64_t)got;
	close(fd);
	return got < 0 ? fail_errno("getdents64", path) : 0;
}

/*
 * readdir lists whole directories of READDIR_ENTRIES files each, readdir_small (variant 1)
 * of SMALL_LISTING_ENTRIES, so every operation of a case does the same work; the
 * directories themselves sit in an App. C tree.  About five times --files entries in all,
 * so the small case has as many directories to list as the large one allows.
 * readdir_entries (variant 2) lists directories of --files entries each: a workload's own
 * directory size, where it lists directories far larger than readdir's (a listing's cost
 * is not a line through the two small sizes: large directories are indexed, in blocks).
 */
static size_t listing_entries(const struct bench *b, const struct suite_config *cfg)
{
	return b->variant >= 2 ? cfg->files : b->variant ? SMALL_LISTING_ENTRIES : READDIR_ENTRIES;
}

static size_t within(size_t n, size_t low, size_t high)
{
	return n < low ? low : n > high ? high : n;
}

static size_t listing_dirs(const struct bench *b, const struct suite_config *cfg)
{
	size_t entries = listing_entries(b, cfg);

	if (b->variant >= 2)
		return within(LISTED_ENTRIES / entries, MIN_LISTINGS, MAX_LISTINGS);
	return within(cfg->files * 5 / entries, 20, 500);
}

/* Entry e of listing directory d: "<d's leaf path>/f<e>". */
static void listed_path(const struct bench_ctx *ctx, size_t d, size_t e, char *buf, size_t len)
{
	char dir[TREE_PATH_MAX];

	tree_leaf_path(&ctx->tree, d, "r", dir, sizeof(dir));
	snprintf(buf, len, "%s/f%02zu", dir, e);
}

/* The listing directories of a case, each holding listing_entries empty files. */
static int make_listing_dirs(struct bench_ctx *ctx)
{
	size_t entries = listing_entries(ctx->c->bench, ctx->cfg);
	size_t ndirs = listing_dirs(ctx->c->bench, ctx->cfg);
	char dir[TREE_PATH_MAX], path[TREE_PATH_MAX + 32]; /* room for any entry number */

	tree_init(&ctx->tree, ndirs);
	if (tree_make_dirs(&ctx->tree, ctx->dirfd) != 0)
		return -1;
	for (size_t d = 0; d < ndirs; d++) {
		tree_leaf_path(&ctx->tree, d, "r", dir, sizeof(dir));
		if (mkdirat(ctx->dirfd, dir, 0755) != 0)
			return fail_errno("mkdirat", dir);
		for (size_t e = 0; e < entries; e++) {
			listed_path(ctx, d, e, path, sizeof(path));
			if (make_file(ctx->dirfd, path, NULL, 0) != 0)
				return -1;
		}
	}
	return 0;
}

static int setup_listing_dirs(struct bench_ctx *ctx)
{
	char dir[TREE_PATH_MAX];

	if (make_listing_dirs(ctx) != 0)
		return -1;
	ctx->n = ctx->norder = ctx->tree.n;
	ctx->entries_per_op = listing_entries(ctx->c->bench, ctx->cfg);
	tree_leaf_path(&ctx->tree, 0, "r", dir, sizeof(dir));
	return list_directory(ctx->dirfd, dir, &ctx->listed_bytes_per_op);
}

/*
 * unlink_entries (variant 3) empties directories of --files entries each, readdir_entries'
 * layout, one directory after another in creation order, as rm -rf empties a directory it
 * listed: a workload's own directory size.  On xfs an unlink costs more in a large
 * directory (measured unpinned on the val image: 20-23 us in directories of 100, 28-31 in
 * directories of 2,000 and of 14,000); on ext4 and btrfs it moves little.
 */
static int setup_unlink_dirs(struct bench_ctx *ctx)
{
	if (make_listing_dirs(ctx) != 0)
		return -1;
	ctx->n = ctx->norder = ctx->tree.n * listing_entries(ctx->c->bench, ctx->cfg);
	return 0;
}

/* Cold: drop every cache; warm: stat every file to be unlinked. */
static int prepare_cache_unlink_dirs(struct bench_ctx *ctx)
{
	size_t entries = listing_entries(ctx->c->bench, ctx->cfg);
	char path[TREE_PATH_MAX + 32];
	struct stat st;

	if (ctx->c->cache == CACHE_COLD)
		return cache_drop_all();
	for (size_t i = 0; i < ctx->n; i++) {
		listed_path(ctx, i / entries, i % entries, path, sizeof(path));
		if (fstatat(ctx->dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
			return fail_errno("fstatat (warming)", path);
	}
	return 0;
}

size_t meta_files_made(const struct bench *b, const struct suite_config *cfg)
{
	if (b->setup == setup_listing_dirs || b->setup == setup_unlink_dirs)
		return listing_dirs(b, cfg) * listing_entries(b, cfg);
	return cfg->files;
}

/* Cold: drop every cache (dentries and inodes included); warm: stat what will be used. */
static int prepare_cache_stat_leaves(struct bench_ctx *ctx, const char *prefix)
{
	char path[TREE_PATH_MAX];
	struct stat st;

	if (ctx->c->cache == CACHE_COLD)
		return cache_drop_all();
	for (size_t i = 0; i < ctx->tree.n; i++) {
		tree_leaf_path(&ctx->tree, i, prefix, path, sizeof(path));
		if (fstatat(ctx->dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
			return fail_errno("fstatat (warming)", path);
	}
	return 0;
}

static int prepare_cache_files(struct bench_ctx *ctx) { return prepare_cache_stat_leaves(ctx, "f"); }
static int prepare_cache_leaf_dirs(struct bench_ctx *ctx) { return prepare_cache_stat_leaves(ctx, "d"); }
static int prepare_cache_listing_dirs(struct bench_ctx *ctx) { return prepare_cache_stat_leaves(ctx, "r"); }

/* For benchmarks that create leaves: warm means the parent directories are cached.
 * Stat-ing the missing leaves would plant negative dentries and change what is measured. */
static int prepare_cache_parents(struct bench_ctx *ctx)
{
	char path[TREE_PATH_MAX];
	struct stat st;

	if (ctx->c->cache == CACHE_COLD)
		return cache_drop_all();
	if (ctx->tree.levels < 2) /* the leaves lie in the case's own directory */
		return 0;
	for (size_t i = 0; i < ctx->tree.n; i += TREE_FANOUT) {
		tree_leaf_path(&ctx->tree, i, "f", path, sizeof(path));
		*strrchr(path, '/') = '\0';
		if (fstatat(ctx->dirfd, path, &st, 0) != 0)
			return fail_errno("fstatat (warming)", path);
	}
	return 0;
}

static int run_create(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	leaf(ctx, i, "f", path);
	ctx->pending_fd = openat(ctx->dirfd, path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	return ctx->pending_fd < 0 ? fail_errno("openat(O_CREAT)", path) : 0;
}

static int run_open(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	leaf(ctx, i, "f", path);
	ctx->pending_fd = openat(ctx->dirfd, path, O_RDONLY | O_CLOEXEC);
	return ctx->pending_fd < 0 ? fail_errno("openat", path) : 0;
}

static int close_pending(struct bench_ctx *ctx, size_t i)
{
	(void)i;
	if (close(ctx->pending_fd) != 0)
		return fail_errno("close", NULL);
	ctx->pending_fd = -1;
	return 0;
}

/*
 * create_written: each file is written (c->size bytes) and closed as soon as it is made,
 * as an unpacker, a copy or a compiler makes its outputs.  Only the create is timed: on
 * btrfs it reserves metadata space, and once many files hold unwritten data that reservation
 * waits for their data to be written out (measured on an aged 2 GiB image: 34 us for an
 * empty create, 144 us among files of 4 KiB, 206 us among files of 32 KiB).  ext4 and xfs
 * do not wait.
 *
 * What a create waits for depends on the sizes of the files around it, not only on their
 * mean: on an aged btrfs, 637 files holding 24 MB cost 173-210 us a create at 37.8 KB each,
 * 280-330 us as a source tree's mix of sizes (most under 30 KB, a few of up to 1.7 MB).  So
 * create_written_mix writes each file at a workload's mix (--file-sizes, cycled), and its
 * case's size is the mix's mean.
 */
static int setup_written(struct bench_ctx *ctx)
{
	fill_write_buffer(ctx);
	return setup_dirs_only(ctx);
}

/*
 * unlink_written: each file holds c->size bytes, written and made durable before timing,
 * so an unlink also frees its blocks and its cached pages, as rm -rf after a copy or a
 * build's clean does.  Measured on the val images (Python, corpus files of 37 KB on
 * average): 17 us against 32-40 for an empty file on ext4, 18-24 against 26-68 on xfs,
 * 32-36 against 51-58 on btrfs, 8 against 17 on tmpfs; written a moment before or long
 * since made little difference.
 */
static int setup_files_with_data(struct bench_ctx *ctx)
{
	fill_write_buffer(ctx);
	if (make_leaf_files(ctx, 1) != 0)
		return -1;
	return syncfs(ctx->dirfd) == 0 ? 0 : fail_errno("syncfs", ctx->cfg->target);
}

static int write_and_close(struct bench_ctx *ctx, size_t i)
{
	uint64_t size = written_size(ctx, i);
	ssize_t n = size ? write(ctx->pending_fd, ctx->buf, size) : 0;

	if (n != (ssize_t)size) {
		close(ctx->pending_fd);
		ctx->pending_fd = -1;
		return n < 0 ? fail_errno("write", NULL) : fail_msg("write: short write of a new file");
	}
	return close_pending(ctx, i);
}

static void free_buffer(struct bench_ctx *ctx)
{
	free(ctx->buf);
	ctx->buf = NULL;
}

/*
 * write_new_mix: the writes into files just made, as an unpacker, a compiler or a database
 * writing its journal makes them.  File after file of the workload's mix of bytes
 * (--file-sizes, cycled) is made, written from its start in the workload's mix of request
 * sizes (--request-sizes, cycled on from file to file; a file's last write what is left of
 * it), and closed once whole; only the writes are timed, and the requests straddle pages as
 * the workload's do.  A write into a file
 * just made costs more than an append to one long file, by a different amount on each
 * filesystem: each new file's first pages, blocks and size are set up anew.  Replayed on
 * tmpfs, tar's writes into the files it unpacked took 3.7-4.2 us each where appends to
 * one file (append_mix) at the same sizes took 1.8; on ext4 both cost about the same.
 */
static int setup_new_writes(struct bench_ctx *ctx)
{
	size_t writes = 0;

	fill_write_buffer(ctx);
	if (setup_dirs_only(ctx) != 0)
		return -1;
	for (size_t j = 0; j < ctx->tree.n; j++)
		for (uint64_t done = 0, bytes = written_size(ctx, j); done < bytes; writes++)
			done += request_size(ctx->cfg, writes);
	if (writes == 0)
		return fail_msg("write_new_mix: the mix of file sizes (--file-sizes) writes no bytes");
	ctx->n = ctx->norder = writes;
	ctx->file_index = 0;
	ctx->file_done = 0;
	ctx->pending_fd = -1;
	return 0;
}

/* Write back what earlier cases left dirty (their writeback would throttle these writes),
 * then warm the parents as a create's case does. */
static int prepare_new_writes(struct bench_ctx *ctx)
{
	if (syncfs(ctx->dirfd) != 0)
		return fail_errno("syncfs", ctx->cfg->target);
	return prepare_cache_parents(ctx);
}

/* Untimed: make the next file that holds bytes, unless one is being written. */
static int open_new_file(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	(void)i;
	if (ctx->pending_fd >= 0)
		return 0;
	while (written_size(ctx, ctx->file_index) == 0)
		ctx->file_index++;
	tree_leaf_path(&ctx->tree, ctx->file_index, "f", path, sizeof(path));
	ctx->pending_fd = openat(ctx->dirfd, path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	ctx->file_done = 0;
	return ctx->pending_fd < 0 ? fail_errno("openat(O_CREAT)", path) : 0;
}

static int run_new_write(struct bench_ctx *ctx, size_t i)
{
	uint64_t left = written_size(ctx, ctx->file_index) - ctx->file_done, asked = request_size(ctx->cfg, i);
	uint64_t size = left < asked ? left : asked;
	ssize_t n = write(ctx->pending_fd, ctx->buf, size);

	if (n != (ssize_t)size)
		return n < 0 ? fail_errno("write", NULL) : fail_msg("write: short write into a new file");
	ctx->file_done += size;
	return 0;
}

/* Untimed: close the file once it holds all its bytes, and go on to the next. */
static int close_whole_file(struct bench_ctx *ctx, size_t i)
{
	if (ctx->file_done < written_size(ctx, ctx->file_index))
		return 0;
	ctx->file_index++;
	return close_pending(ctx, i);
}

static void teardown_new_writes(struct bench_ctx *ctx)
{
	if (ctx->pending_fd >= 0)
		close(ctx->pending_fd);
	ctx->pending_fd = -1;
	free_buffer(ctx);
}

static int run_unlink(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	leaf(ctx, i, "f", path);
	return unlinkat(ctx->dirfd, path, 0) == 0 ? 0 : fail_errno("unlinkat", path);
}

/* Unlink i empties the directories in order: entry i % entries of directory i / entries. */
static int run_unlink_entry(struct bench_ctx *ctx, size_t i)
{
	size_t entries = listing_entries(ctx->c->bench, ctx->cfg);
	char path[TREE_PATH_MAX + 32];

	listed_path(ctx, i / entries, i % entries, path, sizeof(path));
	return unlinkat(ctx->dirfd, path, 0) == 0 ? 0 : fail_errno("unlinkat", path);
}

static int run_mkdir(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	leaf(ctx, i, "d", path);
	return mkdirat(ctx->dirfd, path, 0755) == 0 ? 0 : fail_errno("mkdirat", path);
}

static int run_rmdir(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	leaf(ctx, i, "d", path);
	return unlinkat(ctx->dirfd, path, AT_REMOVEDIR) == 0 ? 0 : fail_errno("rmdir", path);
}

static int stat_leaf(struct bench_ctx *ctx, size_t i, const char *prefix)
{
	char path[TREE_PATH_MAX];
	struct stat st;

	leaf(ctx, i, prefix, path);
	return fstatat(ctx->dirfd, path, &st, 0) == 0 ? 0 : fail_errno("fstatat", path);
}

static int run_stat(struct bench_ctx *ctx, size_t i)
{
	return stat_leaf(ctx, i, ctx->c->bench->variant ? "d" : "f");
}

/*
 * Untimed: look the directory up, as a program does before it lists one (it came from its
 * parent's listing, or the program stat'ed it), so its inode is in memory and a cold listing
 * times reading the entries, not the inode the trace prices with the lookup.
 */
static int look_up_listing_dir(struct bench_ctx *ctx, size_t i)
{
	return stat_leaf(ctx, i, "r");
}

/* One readdir operation lists one directory, whole. */
static int run_readdir(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];
	uint64_t listed;

	leaf(ctx, i, "r", path);
	return list_directory(ctx->dirfd, path, &listed);
}

/*
 * stat_listed_mix: the attributes of every file of a directory, read in the order a listing
 * returned them, as `ls -l` reads them and as an NFS server answering a READDIRPLUS does
 * (it returns each entry's attributes and handle).  The files hold a workload's mix of
 * bytes (--file-sizes, cycled), which matters where small files keep their data beside
 * their inodes: on btrfs a file of up to 2 KiB is inline in the metadata leaves, so its
 * inode's neighbours are fewer to a leaf read.  Each directory is listed untimed before its
 * first stat; each stat, by name relative to the listed directory, is timed alone.
 */
static int stat_listed_reset(struct bench_ctx *ctx)
{
	if (ctx->listed_fd >= 0)
		close(ctx->listed_fd);
	ctx->listed_fd = -1;
	ctx->names_len = ctx->next_name = 0;
	return 0;
}

static int keep_name(struct bench_ctx *ctx, const char *name)
{
	size_t len = strlen(name) + 1;

	if (ctx->names_len + len > ctx->names_cap) {
		size_t cap = ctx->names_cap ? ctx->names_cap * 2 : 16384;
		char *grown;

		while (cap < ctx->names_len + len)
			cap *= 2;
		grown = realloc(ctx->names, cap);
		if (!grown)
			return fail_msg("stat_listed_mix: out of memory for a listing's names");
		ctx->names = grown;
		ctx->names_cap = cap;
	}
	memcpy(ctx->names + ctx->names_len, name, len);
	ctx->names_len += len;
	return 0;
}

/* Untimed: once the names listed so far are all stat'ed, list leaf i's directory. */
static int list_next_directory(struct bench_ctx *ctx, size_t i)
{
	_Alignas(struct dirent64_record) char buf[32768];
	char path[TREE_PATH_MAX];
	char *slash;
	long got;

	if (ctx->next_name < ctx->names_len)
		return 0;
	stat_listed_reset(ctx);
	leaf(ctx, i, "f", path);
	slash = strrchr(path, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(path, ".");
	ctx->listed_fd = openat(ctx->dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx->listed_fd < 0)
		return fail_errno("openat(O_DIRECTORY)", path);
	while ((got = syscall(SYS_getdents64, ctx->listed_fd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			const struct dirent64_record *d = (const void *)(buf + at);

			if ((d->type == DT_REG || d->type == DT_UNKNOWN) && keep_name(ctx, d->name) != 0)
				return -1;
			at += d->reclen;
		}
	}
	if (got < 0)
		return fail_errno("getdents64", path);
	return ctx->names_len ? 0 : fail_msg("stat_listed_mix: %s lists no files", path);
}

/* The listing's next name, moving past it. */
static const char *take_listed_name(struct bench_ctx *ctx)
{
	const char *name = ctx->names + ctx->next_name;

	ctx->next_name += strlen(name) + 1;
	return name;
}

static int run_stat_listed(struct bench_ctx *ctx, size_t i)
{
	const char *name = take_listed_name(ctx);
	struct stat st;

	(void)i;
	return fstatat(ctx->listed_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : fail_errno("fstatat", name);
}

/*
 * read_listed_mix: the first read of each file of a directory, in the order a listing
 * returned them, asking for all of the file (the mix's largest size), as grep -r, sha256sum
 * over a tree or an interpreter's imports read files they find.  The files hold a
 * workload's mix of bytes (--file-sizes, cycled).  On btrfs a file of up to 2 KiB is inline
 * in the metadata leaf its open has read already, so its first read costs a tenth of one
 * from a data extent (a man tree's files, cold: 12-16 us against 150 us for files over 4
 * KiB); a read of one large file, fsbench's read, never sees that.  The listing and each
 * open and close are untimed; each read is timed alone.
 */
static int setup_listed_reads(struct bench_ctx *ctx)
{
	uint64_t largest = buffer_bytes(ctx);

	ctx->read_bytes = largest ? largest : 1;
	return setup_files_with_data(ctx);
}

static int open_next_listed(struct bench_ctx *ctx, size_t i)
{
	const char *name;

	if (list_next_directory(ctx, i) != 0)
		return -1;
	name = take_listed_name(ctx);
	ctx->pending_fd = openat(ctx->listed_fd, name, O_RDONLY | O_CLOEXEC);
	return ctx->pending_fd < 0 ? fail_errno("openat", name) : 0;
}

static int run_read_listed(struct bench_ctx *ctx, size_t i)
{
	(void)i;
	return read(ctx->pending_fd, ctx->buf, ctx->read_bytes) >= 0 ? 0 : fail_errno("read", NULL);
}

/* Every repetition walks the directories from the first, with caches as the case says. */
static int prepare_stat_listed(struct bench_ctx *ctx)
{
	stat_listed_reset(ctx);
	return prepare_cache_files(ctx);
}

static void teardown_stat_listed(struct bench_ctx *ctx)
{
	stat_listed_reset(ctx);
	free(ctx->names);
	ctx->names = NULL;
	ctx->names_cap = 0;
	free_buffer(ctx);
}

static int run_rename(struct bench_ctx *ctx, size_t i)
{
	char from[TREE_PATH_MAX], to[TREE_PATH_MAX];

	leaf(ctx, i, "f", from);
	leaf(ctx, i, "m", to);
	return renameat(ctx->dirfd, from, ctx->dirfd, to) == 0 ? 0 : fail_errno("renameat", from);
}

/*
 * create_renamed_mix and rename_written_mix: each file is made under a temporary name,
 * written at a workload's mix and closed, then renamed to its own name, as rsync, git and
 * every "write a copy, then rename it into place" saver do.  On btrfs the rename of a file
 * holding unwritten data starts writing that data out, so the wait create_written sees
 * among written files moves from the creates to the renames (measured on the val images,
 * 640 files of a source tree's mix: creates 205-240 us each without the renames and 33-35 us
 * with them, the renames 205 us each; on ext4 and xfs renames of 25-38 us and creates as
 * without).  The first times the create, the second the rename; the rest is untimed.
 */
static int write_close_and_rename(struct bench_ctx *ctx, size_t i)
{
	return write_and_close(ctx, i) == 0 ? run_rename(ctx, i) : -1;
}

static int create_and_write(struct bench_ctx *ctx, size_t i)
{
	return run_create(ctx, i) == 0 ? write_and_close(ctx, i) : -1;
}

static int run_link(struct bench_ctx *ctx, size_t i)
{
	char from[TREE_PATH_MAX], to[TREE_PATH_MAX];

	leaf(ctx, i, "f", from);
	leaf(ctx, i, "l", to);
	return linkat(ctx->dirfd, from, ctx->dirfd, to, 0) == 0 ? 0 : fail_errno("linkat", from);
}

static int run_symlink(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];

	leaf(ctx, i, "s", path);
	return symlinkat("target-of-symlink", ctx->dirfd, path) == 0 ? 0 : fail_errno("symlinkat", path);
}

/* Alternate the mode so every call really changes the inode. */
static int run_chmod(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];
	mode_t mode = (i & 1) ? 0600 : 0640;

	leaf(ctx, i, "f", path);
	return fchmodat(ctx->dirfd, path, mode, 0) == 0 ? 0 : fail_errno("fchmodat", path);
}

static int run_utimes(struct bench_ctx *ctx, size_t i)
{
	char path[TREE_PATH_MAX];
	struct timespec times[2] = { { (time_t)(1000000 + i), 0 }, { (time_t)(1000000 + i), 0 } };

	leaf(ctx, i, "f", path);
	return utimensat(ctx->dirfd, path, times, 0) == 0 ? 0 : fail_errno("utimensat", path);
}

static int open_before_close(struct bench_ctx *ctx, size_t i)
{
	return run_open(ctx, i);
}

#define BOTH_ORDERS (ORDER_SEQ | ORDER_RANDOM)
#define META_CACHES (CACHE_COLD | CACHE_WARM)

const struct bench meta_benches[] = {
	{ "create", FAMILY_META, "create", "allocating an inode and a directory entry (openat O_CREAT|O_EXCL)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 0, 0,
	  setup_dirs_only, prepare_cache_parents, NULL, run_create, close_pending, NULL, NULL, 0 },
	{ "create_written", FAMILY_META, "create",
	  "a create among files written as they are made (size: bytes written into each, untimed)",
	  ORDER_SEQ, META_CACHES, SWEEP_WRITTEN, 0, 0,
	  setup_written, prepare_cache_parents, NULL, run_create, write_and_close, free_buffer, NULL, 0 },
	{ "create_written_mix", FAMILY_META, "create",
	  "create_written at a workload's mix of bytes written into each file (--file-sizes, cycled)",
	  ORDER_SEQ, META_CACHES, SWEEP_MIX, 0, 0,
	  setup_written, prepare_cache_parents, NULL, run_create, write_and_close, free_buffer, NULL, 0 },
	{ "create_renamed_mix", FAMILY_META, "create",
	  "a create among files written at a workload's mix (--file-sizes, cycled) and each renamed into place "
	  "once closed (the writes and renames untimed)",
	  ORDER_SEQ, META_CACHES, SWEEP_MIX, 0, 0,
	  setup_written, prepare_cache_parents, NULL, run_create, write_close_and_rename, free_buffer, NULL, 0 },
	{ "rename_written_mix", FAMILY_META, "rename",
	  "renaming into place a file just made and written at a workload's mix (--file-sizes, cycled; the "
	  "create and the writes untimed)",
	  ORDER_SEQ, META_CACHES, SWEEP_MIX, 0, 0,
	  setup_written, prepare_cache_parents, create_and_write, run_rename, NULL, free_buffer, NULL, 0 },
	{ "unlink", FAMILY_META, "unlink", "removing a file's entry and freeing its inode",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 0, 0,
	  setup_files, prepare_cache_files, NULL, run_unlink, NULL, NULL, NULL, 0 },
	{ "unlink_written", FAMILY_META, "unlink",
	  "removing a file that holds data (size: its bytes): its blocks and cached pages freed too",
	  ORDER_SEQ, META_CACHES, SWEEP_WRITTEN, 0, 0,
	  setup_files_with_data, prepare_cache_files, NULL, run_unlink, NULL, free_buffer, NULL, 0 },
	{ "unlink_written_mix", FAMILY_META, "unlink",
	  "unlink_written at a workload's mix of bytes the files hold (--file-sizes, cycled)",
	  ORDER_SEQ, META_CACHES, SWEEP_MIX, 0, 0,
	  setup_files_with_data, prepare_cache_files, NULL, run_unlink, NULL, free_buffer, NULL, 0 },
	{ "unlink_entries", FAMILY_META, "unlink",
	  "emptying directories of --files entries each, one after another (rm -rf of a large directory): a "
	  "workload's own directory size, measured where --only names it",
	  ORDER_SEQ, META_CACHES, SWEEP_NONE, 0, 3,
	  setup_unlink_dirs, prepare_cache_unlink_dirs, NULL, run_unlink_entry, NULL, NULL, NULL, 1 },
	{ "write_new_mix", FAMILY_DATA, "write",
	  "writing files just made from their start, at a workload's mix of bytes in each file (--file-sizes) "
	  "and of request sizes (--request-sizes; size: their mean), each create and close untimed",
	  ORDER_SEQ, CACHE_WARM, SWEEP_MIX_REQUESTS, 0, 0,
	  setup_new_writes, prepare_new_writes, open_new_file, run_new_write, close_whole_file, teardown_new_writes, NULL, 0 },
	{ "mkdir", FAMILY_META, "mkdir", "allocating a directory (inode, entry and its first block)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 0, 0,
	  setup_dirs_only, prepare_cache_parents, NULL, run_mkdir, NULL, NULL, NULL, 0 },
	{ "rmdir", FAMILY_META, "rmdir", "removing an empty directory",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 0, 0,
	  setup_leaf_dirs, prepare_cache_leaf_dirs, NULL, run_rmdir, NULL, NULL, NULL, 0 },
	{ "stat_file", FAMILY_META, "stat", "name lookup plus attribute read of a file",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 0,
	  setup_files, prepare_cache_files, NULL, run_stat, NULL, NULL, NULL, 0 },
	{ "stat_listed_mix", FAMILY_META, "stat",
	  "a file's attributes read in its directory's listing order (ls -l, an NFS READDIRPLUS), among files "
	  "holding a workload's mix of bytes (--file-sizes, cycled)",
	  ORDER_SEQ, META_CACHES, SWEEP_MIX, 1, 0,
	  setup_files_with_data, prepare_stat_listed, list_next_directory, run_stat_listed, NULL,
	  teardown_stat_listed, NULL, 0 },
	{ "read_listed_mix", FAMILY_META, "read",
	  "a file's first read, asking for all of it, in its directory's listing order (grep -r, an import), "
	  "among files holding a workload's mix of bytes (--file-sizes, cycled)",
	  ORDER_SEQ, META_CACHES, SWEEP_MIX, 1, 0,
	  setup_listed_reads, prepare_stat_listed, open_next_listed, run_read_listed, close_pending,
	  teardown_stat_listed, NULL, 0 },
	{ "stat_dir", FAMILY_META, "stat", "name lookup plus attribute read of a directory",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 1,
	  setup_leaf_dirs, prepare_cache_leaf_dirs, NULL, run_stat, NULL, NULL, NULL, 0 },
	{ "open", FAMILY_META, "open", "path lookup and opening an existing file read-only",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 0,
	  setup_files, prepare_cache_files, NULL, run_open, close_pending, NULL, NULL, 0 },
	{ "close", FAMILY_META, "close", "closing a just-opened file descriptor",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 0,
	  setup_files, prepare_cache_files, open_before_close, close_pending, NULL, NULL, NULL, 0 },
	{ "readdir", FAMILY_META, "readdir",
	  "listing a whole directory of 100 entries, looked up before (open, getdents64, close)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 0,
	  setup_listing_dirs, prepare_cache_listing_dirs, look_up_listing_dir, run_readdir, NULL, NULL, NULL, 0 },
	{ "readdir_small", FAMILY_META, "readdir",
	  "listing a whole directory of 10 entries, looked up before (open, getdents64, close)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 1,
	  setup_listing_dirs, prepare_cache_listing_dirs, look_up_listing_dir, run_readdir, NULL, NULL, NULL, 0 },
	{ "readdir_entries", FAMILY_META, "readdir",
	  "listing a whole directory of --files entries, looked up before (open, getdents64, close): a "
	  "workload's own directory size, measured where --only names it",
	  ORDER_SEQ, META_CACHES, SWEEP_NONE, 1, 2,
	  setup_listing_dirs, prepare_cache_listing_dirs, look_up_listing_dir, run_readdir, NULL, NULL, NULL, 1 },
	{ "rename", FAMILY_META, "rename", "renaming a file within its directory",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 0, 0,
	  setup_files, prepare_cache_files, NULL, run_rename, NULL, NULL, NULL, 0 },
	{ "link", FAMILY_META, "link", "adding a hard link beside a file (entry, link count)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 0, 0,
	  setup_files, prepare_cache_files, NULL, run_link, NULL, NULL, NULL, 0 },
	{ "symlink", FAMILY_META, "symlink", "creating a symbolic link (inode holding the target)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 0, 0,
	  setup_dirs_only, prepare_cache_parents, NULL, run_symlink, NULL, NULL, NULL, 0 },
	{ "chmod", FAMILY_META, "setattr", "changing a file's mode (an inode update)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 0,
	  setup_files, prepare_cache_files, NULL, run_chmod, NULL, NULL, NULL, 0 },
	{ "utimes", FAMILY_META, "setattr", "setting a file's times (an inode update)",
	  BOTH_ORDERS, META_CACHES, SWEEP_NONE, 1, 0,
	  setup_files, prepare_cache_files, NULL, run_utimes, NULL, NULL, NULL, 0 },
};
const size_t meta_bench_count = sizeof(meta_benches) / sizeof(meta_benches[0]);
