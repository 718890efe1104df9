/*
 * fsprobe.c - run the parameter probes (probe.h) on a target directory and write JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cache.h"
#include "json.h"
#include "probe.h"
#include "util.h"

struct probe {
	const char *name;
	const char *measures;
	int (*run)(const struct probe_ctx *c, struct json *j);
};

static const struct probe probes[] = {
	{ "block-size", "block size (allocation) and page-cache transfer unit (Shenoy 2.2)", probe_block_size },
	{ "readahead", "sequential readahead depth (Shenoy 2.3)", probe_readahead },
	{ "direct-blocks", "direct block pointers in an inode (Shenoy 2.5)", probe_direct_blocks },
	{ "name-cache", "name-lookup and inode cache: hit against miss (Tang 4.1 phase II)", probe_name_cache },
	{ "cache-size", "page-cache size, in this process's memory cgroup if any (Shenoy 2.4)", probe_cache_size },
};
enum { N_PROBES = sizeof(probes) / sizeof(probes[0]) };

int probe_cold_file(const struct probe_ctx *c, const char *name, uint64_t size)
{
	struct statvfs vfs;
	char *chunk;
	int fd, rc = 0;

	if (fstatvfs(c->dir, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < size + (16 << 20))
		return fail_msg("%s needs %llu MiB free (a %llu MiB file and 16 MiB to spare); the target has "
				"%llu MiB", name, (unsigned long long)((size >> 20) + 16), (unsigned long long)(size >> 20),
				(unsigned long long)((uint64_t)vfs.f_bavail * vfs.f_frsize >> 20));
	fd = openat(c->dir, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail_errno("create", name);
	chunk = xaligned(4096, 1 << 20);
	memset(chunk, 'p', 1 << 20);
	for (uint64_t done = 0; done < size && rc == 0;) {
		size_t n = size - done < (1 << 20) ? (size_t)(size - done) : (1 << 20);
		ssize_t w = write(fd, chunk, n);
		if (w <= 0)
			rc = fail_errno("write", name);
		else
			done += (uint64_t)w;
	}
	if (rc == 0)
		rc = cache_evict_file(fd, name);
	close(fd);
	free(chunk);
	if (rc != 0)
		unlinkat(c->dir, name, 0); /* nothing of the probe's is left behind */
	return rc;
}

static void usage(FILE *out)
{
	fputs("Usage: fsprobe --target DIR [--only NAME,...] [--quick] [--output FILE] [--list]\n"
	      "Finds filesystem parameters from user space (Tang 4.1 phase II, Shenoy) in scratch\n"
	      "files beneath DIR, and writes JSON.\n", out);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "target", required_argument, NULL, 't' }, { "only", required_argument, NULL, 'o' },
		{ "quick", no_argument, NULL, 'q' }, { "output", required_argument, NULL, 'O' },
		{ "list", no_argument, NULL, 'l' }, { "help", no_argument, NULL, 'h' }, { 0, 0, 0, 0 },
	};
	struct probe_ctx ctx = { .dir = -1 };
	const char *only = NULL, *output = NULL;
	FILE *out = stdout;
	struct json j;
	int c, failures = 0, selected[N_PROBES];

	program_name = "fsprobe";
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't': ctx.target = optarg; break;
		case 'o': only = optarg; ctx.asked = 1; break;
		case 'q': ctx.quick = 1; break;
		case 'O': output = optarg; break;
		case 'l':
			for (int i = 0; i < N_PROBES; i++)
				printf("%-14s %s\n", probes[i].name, probes[i].measures);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage_error("unknown option");
		}
	}
	if (!ctx.target)
		usage_error("--target is required");
	for (int i = 0; i < N_PROBES; i++)
		selected[i] = !only;
	if (only) { /* one parse: each name must be a probe, and marks it to run */
		char copy[256], *name, *save;
		snprintf(copy, sizeof(copy), "%s", only);
		for (name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
			int known = 0;
			for (int i = 0; i < N_PROBES; i++)
				if (strcmp(probes[i].name, name) == 0)
					known = selected[i] = 1;
			if (!known)
				usage_error("unknown probe '%s' (see --list)", name);
		}
	}
	ctx.dir = open(ctx.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx.dir < 0) {
		fail_errno("open target directory", ctx.target);
		return EXIT_USAGE;
	}
	if (output && !(out = fopen(output, "w")))
		die("cannot write %s: %s", output, strerror(errno));
	stop_on_signals();
	json_init(&j, out);
	json_begin_object(&j);
	json_kv_u64(&j, "schema_version", 1);
	json_kv_string(&j, "kind", "probe");
	json_kv_string(&j, "target", ctx.target);
	json_kv_bool(&j, "quick", ctx.quick);
	json_key(&j, "probes");
	json_begin_object(&j);
	for (int i = 0; i < N_PROBES && !stop_requested; i++) {
		if (!selected[i])
			continue;
		json_key(&j, probes[i].name);
		json_begin_object(&j);
		if (probes[i].run(&ctx, &j) != 0) {
			json_kv_string(&j, "error", last_error());
			failures++;
		}
		json_end_object(&j);
	}
	json_end_object(&j);
	json_kv_bool(&j, "interrupted", stop_requested != 0);
	json_end_object(&j);
	fputc('\n', out);
	if (out != stdout && fclose(out) != 0)
		die("cannot write %s: %s", output, strerror(errno));
	close(ctx.dir);
	return failures || stop_requested ? EXIT_RUNTIME : 0;
}
