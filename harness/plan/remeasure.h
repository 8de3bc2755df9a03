/* remeasure.h - a block measured again whole when a sample of it was
 * disturbed from outside: the rule that says a sample was (host steal, or
 * run-queue wait of its process tree beyond what its own threads explain;
 * scripts/mallocbench/disturb.py outside() is the same rule in Python), and
 * the bookkeeping of attempts: each block's attempt (the CSV's `attempt`
 * column, read back by --resume), how many blocks the run has measured again
 * (at most a quarter of the plan's, and of the blocks run so far, each at
 * most REMEASURE_MAX times), the
 * block's values dropped from the stopping store before it is measured again.
 * khugepaged and compaction counts are machine-wide and may be the
 * configuration's own doing: they never trigger it.
 *
 * Every attempt's rows stay in the CSV (block, attempt, position name a
 * sample); readers use each block's last attempt (scripts/mallocbench/mbcsv.py
 * last_attempts).  Fixed plans (-r) measure again too: it is about the data.
 * --resume reads each block's last attempt back (remeasure_resume): done
 * positions are that attempt's, in its order, so an attempt cut short is
 * finished, never begun again, and the blocks the file measured again count
 * towards the limit; only the samples this invocation ran can make it measure
 * a block again.  --shard: each shard measures its own blocks again, a quarter
 * of the blocks it holds.  merge keeps every attempt, sorted block, attempt,
 * position, and refuses a (block, attempt, position) twice. */
#ifndef MB_REMEASURE_H
#define MB_REMEASURE_H
#include "csv.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REMEASURE_MAX 2         /* attempts after the first, per block */
#define REMEASURE_STEAL 0.01    /* host steal over the sample above this share of wall x CPUs */
#define REMEASURE_WAIT 0.05     /* outside run-queue wait above this share of the time wanting a CPU */
/* ... and either at least this long: a dozen scheduler ticks (4 ms at HZ=250; steal counts in
 * 10 ms jiffies).  Below it one preemption or one jiffy already passes the share, so a short
 * sample (the tests' are milliseconds) would be measured again for nothing. */
#define REMEASURE_MIN_S 0.05

/* What a re-measure changes of the plan's state: schedule.h run_ctx_t's buffers. */
typedef struct {
    double *tput;               /* per cell, room for `blocks`: the stopping store's values */
    unsigned *tblock;           /* ... and the block of each */
    size_t *ntput;              /* per cell: how many */
    bool *done;                 /* per block x position: done (--resume) */
    const bool *converged, *stopped; /* per cell: runs no more samples */
    size_t *planned;            /* the samples the progress line expects */
    size_t ncells;
    unsigned blocks;
    bool quiet;                 /* no line when a block is measured again */
} remeasure_plan_t;

/* Per invocation (run_ctx_t.rm): every block's attempt and the budget. */
typedef struct {
    remeasure_plan_t p;
    unsigned *attempt;          /* per block: the attempt being (or last) measured; the file's on --resume */
    unsigned used, most;        /* blocks measured again in the run (the file's included), and the limit */
    unsigned shard_k, shard_n;  /* the invocation's --shard (1 of 1 without): the blocks it holds */
    bool disturbed;             /* a sample of the current attempt was disturbed from outside */
    char why[160];              /* the first such sample: which and why */
    long ncpu;                  /* the machine's CPUs, for the rule */
} remeasure_t;

/* Why the sample of this row (as rows.c filled it) was disturbed from
 * outside, in why; false when it was not, or is not ok, or the columns
 * needed are empty.  ncpu: the CPUs of the machine it ran on.  Outside: host
 * steal over the sample > REMEASURE_STEAL of total_wall_s x ncpu; or the
 * region's run-queue wait less the wait its own threads explain,
 * self = max(0, cpu + wait - wall x ncpu) (they wanted more CPU than the
 * machine has), > REMEASURE_WAIT of wait + cpu (cpu: region_task_clock_s,
 * else region_user_s + region_sys_s; wall: region_wall_s, else total_wall_s);
 * either only when it lasted REMEASURE_MIN_S or more. */
bool remeasure_outside(const csv_row_t *row, long ncpu, char *why, size_t len);

/* The block order's seed for an attempt: the plan's seed for attempt 0
 * (so files without re-measured blocks keep their order), a new one after. */
uint64_t remeasure_seed(uint64_t seed, unsigned attempt);

/* The most blocks a run may measure again: a quarter of the blocks the
 * invocation's shard holds of the plan's `blocks` (all for no --shard),
 * floor, at least 1. */
unsigned remeasure_most(unsigned blocks, unsigned shard_k, unsigned shard_n);

/* Set up once the plan's buffers are (cmd_run.c ctx_alloc): 0 or -ENOMEM.
 * MALLOCBENCH_REMEASURE=0 in the environment: no block is measured again
 * (the tests set it, tests/mbtest.py: their row counts may not depend on the
 * load other tests put on the machine). */
int remeasure_alloc(remeasure_t *rm, const remeasure_plan_t *p, unsigned shard_k, unsigned shard_n);
void remeasure_free(remeasure_t *rm);

/* --resume: each block's last attempt in the file's rows t (no `attempt`
 * column or an empty one: 0), and the blocks measured again there. */
void remeasure_resume(remeasure_t *rm, const csv_table_t *t, unsigned blocks);
/* --resume: the attempt of row i of t (0 without the column). */
unsigned remeasure_row_attempt(const csv_table_t *t, size_t i);

/* After each sample of the block (schedule.c run_blocks): the row just
 * written is looked at with remeasure_outside. */
void remeasure_note(remeasure_t *rm, const csv_row_t *row);
/* After block b's samples: true when one of them was disturbed from outside
 * and the block may be measured again (its attempts and the run's limit
 * allow): then its values are gone from the stopping store (tput, tblock,
 * ntput), its positions are not done, its attempt is the next one and a line
 * says why (tty: the progress line is on the terminal).  The caller runs the block's samples again, in the order of
 * remeasure_seed(seed, rm.attempt[b]). */
bool remeasure_block(remeasure_t *rm, unsigned b, bool tty);

#endif
