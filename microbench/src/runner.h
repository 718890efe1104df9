/*
 * runner.h - run one case: repetitions, warm-up, cache state, timing, and its record.
 */
#ifndef FSBENCH_RUNNER_H
#define FSBENCH_RUNNER_H

#include <signal.h>

#include "bench.h"
#include "clock.h"
#include "json.h"

/* Set by SIGINT/SIGTERM: the runner stops after the operation in flight. */

/* Human-readable label of a case, e.g. "read 4096 B random cold". */
void case_label(const struct bench_case *c, char *buf, size_t len);
const char *order_name(const struct bench_case *c);

/*
 * Run a case and write its result object to `j`.  Returns 0 on success, -1 after
 * reporting a failed operation (nothing is written then: a failed call is never
 * measured as if it had succeeded).
 */
int run_case(const struct suite_config *cfg, const struct bench_case *c, const struct clock_costs *clock,
	     struct json *j);

#endif
