/* remeasure.c - a block disturbed from outside measured again whole
 * (contract: remeasure.h). */
#include "remeasure.h"
#include "error.h"
#include "plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A number column of the row; NAN when empty or not a number. */
static double field(const csv_row_t *row, csv_col_t col)
{
    const char *f = row->field[col];
    char *end;
    double v = strtod(f, &end);
    return f[0] && !*end && isfinite(v) ? v : NAN;
}

bool remeasure_outside(const csv_row_t *row, long ncpu, char *why, size_t len)
{
    if (strcmp(row->field[COL_status], "ok"))
        return false;
    double n = ncpu > 0 ? (double)ncpu : 1;
    double steal = field(row, COL_steal_s), total = field(row, COL_total_wall_s);
    if (!isnan(steal) && total > 0 && steal / (total * n) > REMEASURE_STEAL && steal >= REMEASURE_MIN_S) {
        snprintf(why, len, "steal %.1f%%", steal / (total * n) * 100);
        return true;
    }
    double wait = field(row, COL_region_run_delay_s), cpu = field(row, COL_region_task_clock_s);
    if (isnan(cpu))
        cpu = field(row, COL_region_user_s) + field(row, COL_region_sys_s);
    double wall = field(row, COL_region_wall_s);
    if (isnan(wall))
        wall = total;
    if (isnan(wait) || isnan(cpu) || !(wait + cpu > 0))
        return false;
    double self = isnan(wall) ? 0 : fmax(0, cpu + wait - wall * n);
    double share = (wait - self) / (wait + cpu);
    if (share <= REMEASURE_WAIT || wait - self < REMEASURE_MIN_S)
        return false;
    snprintf(why, len, "waited %.0f%% for a CPU beyond its own threads' demand", share * 100);
    return true;
}

uint64_t remeasure_seed(uint64_t seed, unsigned attempt)
{
    return attempt ? seed ^ ((uint64_t)attempt * 0x9e3779b97f4a7c15ULL) : seed;
}

unsigned remeasure_most(unsigned blocks, unsigned shard_k, unsigned shard_n)
{
    unsigned mine = 0;
    for (unsigned b = 0; b < blocks; b++)
        mine += plan_in_shard(b, shard_k, shard_n);
    return mine / 4 ? mine / 4 : 1;
}

int remeasure_alloc(remeasure_t *rm, const remeasure_plan_t *p, unsigned shard_k, unsigned shard_n)
{
    memset(rm, 0, sizeof *rm);
    rm->p = *p;
    rm->attempt = calloc(p->blocks ? p->blocks : 1, sizeof *rm->attempt);
    rm->most = remeasure_most(p->blocks, shard_k, shard_n);
    rm->shard_k = shard_k;
    rm->shard_n = shard_n;
    const char *off = getenv("MALLOCBENCH_REMEASURE");
    if (off && !strcmp(off, "0"))
        rm->most = 0; /* the tests' runs: rows as planned, whatever the machine's load */
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    rm->ncpu = n > 0 ? n : 1;
    return rm->attempt ? 0 : -ENOMEM;
}

void remeasure_free(remeasure_t *rm)
{
    free(rm->attempt);
    rm->attempt = NULL;
}

unsigned remeasure_row_attempt(const csv_table_t *t, size_t i)
{
    int ca = csv_col(t, "attempt");
    if (ca < 0 || !t->rows[i][ca][0])
        return 0;
    unsigned long a = strtoul(t->rows[i][ca], NULL, 10);
    return a > REMEASURE_MAX ? REMEASURE_MAX : (unsigned)a;
}

void remeasure_resume(remeasure_t *rm, const csv_table_t *t, unsigned blocks)
{
    int cb = csv_col(t, "block");
    memset(rm->attempt, 0, (blocks ? blocks : 1) * sizeof *rm->attempt);
    rm->used = 0;
    for (size_t i = 0; cb >= 0 && i < t->nrows; i++) {
        char *end;
        unsigned long b = strtoul(t->rows[i][cb], &end, 10);
        unsigned a = remeasure_row_attempt(t, i);
        if (*end || b >= blocks || a <= rm->attempt[b])
            continue;
        rm->used += rm->attempt[b] == 0; /* a block counts once, whatever its attempts */
        rm->attempt[b] = a;
    }
}

void remeasure_note(remeasure_t *rm, const csv_row_t *row)
{
    char why[96];
    if (rm->disturbed || !remeasure_outside(row, rm->ncpu, why, sizeof why))
        return;
    rm->disturbed = true;
    snprintf(rm->why, sizeof rm->why, "%.40s on %.40s: %s", row->field[COL_config], row->field[COL_workload], why);
}

/* Block b's values leave the stopping store, every cell's, the others kept in order. */
static void drop_block(const remeasure_plan_t *p, unsigned b)
{
    for (size_t i = 0; i < p->ncells; i++) {
        double *v = &p->tput[i * p->blocks];
        unsigned *blk = &p->tblock[i * p->blocks];
        size_t k = 0;
        for (size_t j = 0; j < p->ntput[i]; j++)
            if (blk[j] != b) {
                v[k] = v[j];
                blk[k++] = blk[j];
            }
        p->ntput[i] = k;
    }
}

bool remeasure_block(remeasure_t *rm, unsigned b, bool tty)
{
    const remeasure_plan_t *p = &rm->p;
    bool disturbed = rm->disturbed;
    rm->disturbed = false;
    /* a new block: within a quarter of the plan's blocks, and of those run so far (0 .. b), so
     * that a run that stops early (a sequential plan at block 8) measured a quarter at most again */
    if (!disturbed || rm->attempt[b] >= REMEASURE_MAX ||
        (rm->attempt[b] == 0 && (rm->used >= rm->most || rm->used >= remeasure_most(b + 1, rm->shard_k, rm->shard_n))))
        return false;
    rm->used += rm->attempt[b]++ == 0;
    drop_block(p, b);
    bool *done = &p->done[(size_t)b * p->ncells];
    for (size_t i = 0; i < p->ncells; i++) {
        *p->planned += !p->converged[i] && !p->stopped[i]; /* the samples to come, for the progress line */
        done[i] = false;
    }
    if (!p->quiet)
        fprintf(stderr, "%s%s: block %u measured again whole (attempt %u of at most %d; %u of %u blocks "
                "the run may): a sample was disturbed from outside, %s\n", tty ? "\n" : "", prog, b,
                rm->attempt[b], REMEASURE_MAX, rm->used, rm->most, rm->why);
    return true;
}
