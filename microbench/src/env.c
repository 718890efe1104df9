/*
 * env.c - read the environment from uname, procfs and sysfs.
 */
#include "env.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util.h"

static void copy_field(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static void probe_cpu_model(struct environment *env)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	copy_field(env->cpu_model, sizeof(env->cpu_model), "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			copy_field(env->cpu_model, sizeof(env->cpu_model), colon);
			break;
		}
	}
	fclose(f);
}

/* The length of mount point `mnt` if it is `path` or one of its ancestors, else 0. */
static size_t mount_prefix(const char *mnt, const char *path)
{
	size_t n = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return 1;
	if (strncmp(mnt, path, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return 0;
	return n;
}

/* Split one mountinfo line in place: its first six fields, and what follows " - ". */
static int split_mount_line(char *line, char *fields[6], char **rest)
{
	char *save = NULL, *tok, *dash = strstr(line, " - ");
	int n = 0;

	if (!dash)
		return 0;
	*dash = '\0';
	*rest = dash + 3;
	for (tok = strtok_r(line, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
		fields[n++] = tok;
	return n == 6;
}

/*
 * The line of /proc/self/mountinfo (format in proc(5):
 *   id parent maj:min root mountpoint options [optional...] - fstype source superoptions)
 * whose device number is `dev`, or with `dev` NULL, whose mount point is the longest
 * ancestor of `path`; the last of equals, the top of any over-mount stack.  1 if found.
 */
static int scan_mounts(struct environment *env, const char *dev, const char *path)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], best[4096] = "", *fields[6], *rest, *save = NULL;
	size_t longest = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char split[4096];
		size_t score;

		copy_field(split, sizeof(split), line);
		if (!split_mount_line(split, fields, &rest))
			continue;
		score = dev ? strcmp(fields[2], dev) == 0 : mount_prefix(fields[4], path);
		if (score && score >= longest) {
			longest = score;
			copy_field(best, sizeof(best), line);
		}
	}
	fclose(f);
	if (!best[0] || !split_mount_line(best, fields, &rest))
		return 0;
	copy_field(env->mount_point, sizeof(env->mount_point), fields[4]);
	copy_field(env->mount_options, sizeof(env->mount_options), fields[5]);
	copy_field(env->fs_type, sizeof(env->fs_type), strtok_r(rest, " \n", &save));
	copy_field(env->mount_source, sizeof(env->mount_source), strtok_r(NULL, " \n", &save));
	copy_field(env->super_options, sizeof(env->super_options), strtok_r(NULL, " \n", &save));
	return 1;
}

/*
 * The mount holding `target`, by its device number.  btrfs gives stat a subvolume's own
 * device number, never the one mountinfo lists; there the mount is found by path.
 */
static void probe_mount(struct environment *env, const char *target, dev_t dev)
{
	char want[64], real[PATH_MAX];

	snprintf(want, sizeof(want), "%u:%u", major(dev), minor(dev));
	if (!scan_mounts(env, want, NULL) && realpath(target, real))
		scan_mounts(env, NULL, real);
}

/* read_ahead_kb of the block device the filesystem was mounted from, if it has one. */
static void probe_readahead(struct environment *env)
{
	struct stat st;
	char path[256], text[64];

	env->read_ahead_kb = -1;
	if (env->mount_source[0] != '/' || stat(env->mount_source, &st) != 0 || !S_ISBLK(st.st_mode))
		return;
	snprintf(env->device, sizeof(env->device), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	snprintf(path, sizeof(path), "/sys/dev/block/%s/queue/read_ahead_kb", env->device);
	if (read_text_file(path, text, sizeof(text)) != 0) {
		/* A partition has no queue of its own; its disk's is one level up. */
		snprintf(path, sizeof(path), "/sys/dev/block/%s/../queue/read_ahead_kb", env->device);
		if (read_text_file(path, text, sizeof(text)) != 0)
			return;
	}
	env->read_ahead_kb = strtol(text, NULL, 10);
}

int environment_probe(struct environment *env, const char *target)
{
	struct utsname u;
	struct stat st;
	struct statvfs vfs;

	memset(env, 0, sizeof(*env));
	env->pinned_cpu = -1;
	copy_field(env->aging_state, sizeof(env->aging_state), "unknown");
	if (stat(target, &st) != 0)
		return fail_errno("stat", target);
	if (statvfs(target, &vfs) != 0)
		return fail_errno("statvfs", target);
	env->fs_block_size = vfs.f_bsize;
	env->fs_size_bytes = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	env->fs_free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (uname(&u) == 0)
		snprintf(env->kernel, sizeof(env->kernel), "%s %s %s", u.sysname, u.release, u.machine);
	gethostname(env->hostname, sizeof(env->hostname) - 1);
	probe_cpu_model(env);
	env->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
	env->memory_bytes = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	probe_mount(env, target, st.st_dev);
	probe_readahead(env);
	if (read_text_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			   env->clocksource, sizeof(env->clocksource)) != 0)
		copy_field(env->clocksource, sizeof(env->clocksource), "unknown");
	return 0;
}

void environment_write_json(const struct environment *env, struct json *j)
{
	json_begin_object(j);
	json_kv_string(j, "hostname", env->hostname);
	json_kv_string(j, "kernel", env->kernel);
	json_kv_string(j, "cpu_model", env->cpu_model);
	json_kv_i64(j, "cpus_online", env->cpus_online);
	json_kv_u64(j, "memory_bytes", env->memory_bytes);
	json_kv_string(j, "fs_type", env->fs_type);
	json_kv_string(j, "mount_point", env->mount_point);
	json_kv_string(j, "mount_source", env->mount_source);
	json_kv_string(j, "mount_options", env->mount_options);
	json_kv_string(j, "super_options", env->super_options);
	json_kv_string(j, "device", env->device[0] ? env->device : NULL);
	json_key(j, "read_ahead_kb");
	if (env->read_ahead_kb >= 0)
		json_i64(j, env->read_ahead_kb);
	else
		json_null(j);
	json_kv_u64(j, "fs_block_size", env->fs_block_size);
	json_kv_u64(j, "fs_size_bytes", env->fs_size_bytes);
	json_kv_u64(j, "fs_free_bytes", env->fs_free_bytes);
	json_kv_string(j, "clocksource", env->clocksource);
	json_kv_u64(j, "timer_overhead_ns", env->clock.timer_ns);
	json_kv_u64(j, "cpu_overhead_ns", env->clock.cpu_ns);
	json_key(j, "pinned_cpu");
	if (env->pinned_cpu >= 0)
		json_i64(j, env->pinned_cpu);
	else
		json_null(j);
	json_kv_string(j, "aging_state", env->aging_state);
	json_end_object(j);
}
