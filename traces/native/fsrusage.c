/*
 * fsrusage - run a command and report the CPU time its whole process tree used.
 *
 * fsbm trace record runs `strace ... -- fsrusage --output FILE -- CMD ...`.  Tracing
 * inflates every traced call's wall time by tens of microseconds (ptrace stops), so a
 * traced program's wall time says little about its untraced one; but the user CPU time
 * the kernel charges to the program's own tasks is barely touched by tracing.  The
 * predictor takes the time a program spends outside the filesystem from it.
 *
 * fsrusage forks, execs CMD, waits for it and writes one JSON object to FILE:
 *   {"user_cpu_ns": N, "system_cpu_ns": N, "wall_ns": N, "exit_status": N, "signal": N,
 *    "helper_pid": N}
 * RUSAGE_CHILDREN counts every descendant that was waited for.  It exits with CMD's
 * status (128 + signal when CMD was killed), as a shell would.  Its own few calls
 * (execve, openat of FILE, clone, wait4, write) are in the trace under helper_pid, so
 * `fsbm trace parse` leaves them out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long timeval_ns(struct timeval tv)
{
	return (long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: fsrusage --output FILE -- COMMAND [ARGS...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[1], "--output") != 0 || strcmp(argv[3], "--") != 0)
		usage();
	const char *output = argv[2];
	char **command = argv + 4;
	/* Opened before the command runs, so a bad path fails before anything happens. */
	int out = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		fprintf(stderr, "fsrusage: cannot create %s: %s\n", output, strerror(errno));
		return 2;
	}
	long long started = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fsrusage: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(command[0], command);
		fprintf(stderr, "fsrusage: cannot run %s: %s\n", command[0], strerror(errno));
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "fsrusage: waitpid: %s\n", strerror(errno));
			return 2;
		}
	}
	long long wall = now_ns() - started;
	struct rusage usage_children;
	getrusage(RUSAGE_CHILDREN, &usage_children);
	int exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	dprintf(out, "{\"user_cpu_ns\": %lld, \"system_cpu_ns\": %lld, \"wall_ns\": %lld, "
		"\"exit_status\": %d, \"signal\": %d, \"helper_pid\": %d}\n",
		timeval_ns(usage_children.ru_utime), timeval_ns(usage_children.ru_stime), wall,
		WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
		(int)getpid());
	close(out);
	return exit_status;
}
