/*
 * runner.h - run one case: repetitions, warm-up, cache state, timing, and its record.
 *
 * A case may be measured in rounds: each round sets it up, runs some of its repetitions
 * and removes what it made, and its samples are kept between rounds, so the suite can
 * take a repetition of every case in turn (fsbench --rounds) and a case's repetitions
 * fall in different minutes of the host and after different cases.
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

/* A case's measurement over its rounds. */
struct case_run;

struct case_run *case_run_new(const struct suite_config *cfg, const struct bench_case *c);
/*
 * One round: set the case up, run `reps` more of its repetitions (no more than --reps in
 * all), remove what it made.  Returns 0 on success, -1 after reporting a failed operation
 * (a case that failed is never recorded: a failed call is never measured as if it had
 * succeeded).
 */
int case_run_round(struct case_run *r, size_t reps, const struct clock_costs *clock);
/* Writes the case's result object to `j` if any repetition was timed; returns whether. */
int case_run_write(const struct case_run *r, struct json *j);
void case_run_free(struct case_run *r);

#endif
