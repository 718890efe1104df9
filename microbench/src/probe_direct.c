/*
 * probe_direct.c - how many blocks an inode addresses directly (Shenoy 2.5; ext2, or ext4
 * without extents).  Append one block at a time, each synced, to a new file: while the
 * inode's direct pointers last, each append allocates one data block; the first append that
 * needs an indirect block allocates two, and takes longer.  Both are recorded: the jump in
 * allocated blocks (st_blocks) is exact, the latency spike is Shenoy's view of it.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "probe.h"
#include "util.h"

enum { MAX_BLOCKS = 64 };

int probe_direct_blocks(const struct probe_ctx *c, struct json *j)
{
	const char *name = "fsbm-probe-direct";
	uint64_t ns[MAX_BLOCKS], start = now_ns(), block;
	struct stat st;
	int fd = openat(c->dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int first_extra = -1, slowest = 1, flags = 0, extents;
	char *buf;

	if (fd < 0)
		return fail_errno("create", name);
	if (fstat(fd, &st) != 0) {
		close(fd);
		return fail_errno("fstat", name);
	}
	block = (uint64_t)st.st_blksize;
	/* ext4 maps files with extents unless made without them: no indirect blocks to find. */
	extents = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_EXTENT_FL);
	buf = xaligned(4096, block);
	memset(buf, 'd', block);
	for (int k = 0; k < MAX_BLOCKS; k++) {
		uint64_t t = now_ns();
		if (write(fd, buf, block) != (ssize_t)block || fsync(fd) != 0) {
			free(buf);
			close(fd);
			return fail_errno("write", name);
		}
		ns[k] = now_ns() - t;
		if (fstat(fd, &st) != 0)
			break;
		/* Blocks allocated beyond the k + 1 written: metadata (an indirect block). */
		if (first_extra < 0 && (uint64_t)st.st_blocks * 512 > (uint64_t)(k + 1) * block)
			first_extra = k;
		if (k > 1 && ns[k] > ns[slowest])
			slowest = k;
	}
	close(fd);
	unlinkat(c->dir, name, 0);
	free(buf);
	json_key(j, "direct_blocks");
	if (first_extra >= 0 && !extents)
		json_i64(j, first_extra); /* blocks 0 .. first_extra - 1 were direct */
	else
		json_null(j);
	json_kv_bool(j, "extent_mapped", extents);
	json_kv_i64(j, "first_metadata_block", first_extra);
	json_kv_string(j, "direct_blocks_method", extents ? "the file is extent-mapped (FS_EXTENT_FL): no direct blocks" :
		       first_extra >= 0 ? "the first append that allocated a block beyond its data (st_blocks)" :
		       "no append within 64 blocks allocated metadata: not indirect blocks");
	json_kv_u64(j, "block_size_bytes", block);
	json_kv_i64(j, "slowest_append", slowest);
	json_key(j, "append_ns");
	json_begin_array(j);
	for (int k = 0; k < MAX_BLOCKS; k++)
		json_u64(j, ns[k]);
	json_end_array(j);
	json_kv_double(j, "seconds", (double)(now_ns() - start) / 1e9);
	return 0;
}
