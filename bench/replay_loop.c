/*
 * replay_loop.c - the baseline bench/replay.py measures fsreplay against: the plan's
 * stat, open and close operations as a plain loop of stat(2), open(2) and close(2) on
 * the same tree, with nothing around them (no path confinement, no timing per call).
 *
 * Usage: replay_loop PLAN TARGET   (prints the loop's runtime in ns)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct op {
	char kind; /* 's'tat, 'o'pen, 'c'lose */
	int handle;
	char *path;
};

static char *field(char *line, int n)
{
	for (int i = 0; i < n && line; i++) {
		line = strchr(line, '\t');
		line = line ? line + 1 : NULL;
	}
	return line;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0, n = 0, max = 1 << 20, handles = 0;
	struct op *ops = calloc(max, sizeof(*ops));
	FILE *in;
	int *fds;
	struct stat st;
	struct timespec t0, t1;

	if (argc != 3 || !(in = fopen(argv[1], "r")) || chdir(argv[2]) != 0) {
		fprintf(stderr, "usage: replay_loop PLAN TARGET\n");
		return 2;
	}
	while (getline(&line, &cap, in) > 0) {
		if (strncmp(line, "O\t", 2) != 0)
			continue;
		if (n == max)
			ops = realloc(ops, (max *= 2) * sizeof(*ops));
		char *kind = field(line, 2), *path = field(line, 12);
		path[strcspn(path, "\t\n")] = '\0';
		ops[n].kind = kind[0] == 's' ? 's' : kind[0] == 'o' ? 'o' : 'c';
		ops[n].handle = atoi(field(line, 3));
		ops[n].path = strdup(path);
		if ((size_t)ops[n].handle + 1 > handles)
			handles = (size_t)ops[n].handle + 1;
		n++;
	}
	fds = calloc(handles + 1, sizeof(int));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n; i++) {
		if (ops[i].kind == 's')
			stat(ops[i].path, &st);
		else if (ops[i].kind == 'o')
			fds[ops[i].handle] = open(ops[i].path, O_RDONLY | O_CLOEXEC);
		else
			close(fds[ops[i].handle]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
