/* seqstop.c - the stopping rule of a sequential plan (contract: seqstop.h), the
 * C twin of scripts/mallocbench/sequential.py: the look schedule, the exact
 * signed-rank CI at a look's level, a look's verdict, and the primary figure of
 * a row (mbdata.cpu_seconds / mbdata.work for --figure cpu).  Pure functions:
 * schedule.c applies them while it runs. */
#include "plan.h"
#include "seqstop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* (blocks, alpha) of the looks before the cap: the smallest two-sided exact p at n
 * blocks is 2 / 2^n (0.0078 at 8), so block 8 is the earliest look that can settle */
static const seq_look_t interim[] = {{8, 0.008}, {12, 0.004}, {18, 0.008}};

size_t seq_looks(unsigned cap, seq_look_t out[SEQ_MAX_LOOKS])
{
    size_t n = 0;
    double spent = 0;
    for (size_t i = 0; i < sizeof interim / sizeof *interim; i++)
        if (interim[i].blocks < cap) {
            out[n++] = interim[i];
            spent += interim[i].alpha;
        }
    out[n++] = (seq_look_t){cap, SEQ_ALPHA - spent};
    return n;
}

double seq_alpha_left(const seq_look_t *looks, size_t nlooks, unsigned blocks, unsigned *taken)
{
    double spent = 0;
    unsigned k = 0;
    for (size_t i = 0; i < nlooks; i++)
        if (looks[i].blocks < blocks) {
            spent += looks[i].alpha;
            k++;
        }
    if (taken)
        *taken = k;
    return SEQ_ALPHA - spent;
}

seq_why_t seq_settle(const double *d, size_t n, double alpha, double floor, double resolution, bool lower_better,
                     double *e, double *l, double *h)
{
    double est, lo, hi;
    bool ci = plan_hl_ci_at(d, n, alpha, &est, &lo, &hi);
    *e = isnan(est) ? NAN : exp(est);
    *l = *h = NAN;
    if (!ci)
        return SEQ_OPEN;
    *l = exp(lo);
    *h = exp(hi);
    if (*l > 1 + floor || *h < 1 - floor)
        return (*l > 1 + floor) == !lower_better ? SEQ_IMPROVED : SEQ_REGRESSED;
    if (*l >= 1 - floor && *h <= 1 + floor)
        return SEQ_NEGLIGIBLE;
    if (resolution > 0 && (*h - *l) / 2 / *e <= resolution)
        return SEQ_RESOLUTION;
    return SEQ_OPEN;
}

const char *seq_why_name(seq_why_t why)
{
    static const char *const names[] = {"open", "improved", "regressed", "negligible", "resolution",
                                        "cap", "budget", "interrupted", "no ratio"};
    return (unsigned)why < sizeof names / sizeof *names ? names[why] : "?";
}

const char *seq_words(double l, double h, double floor, bool lower_better)
{
    if (isnan(l) || isnan(h))
        return "too few";
    bool up = l > 1 + floor, down = h < 1 - floor;
    if (up || down)
        return up == !lower_better ? "improved" : "regressed";
    if (l >= 1 - floor && h <= 1 + floor)
        return "negligible";
    if (l - 1 <= 0 && 0 <= h - 1)
        return "within noise";
    return (l - 1 > 0) == !lower_better ? "improved?" : "regressed?";
}

/* ---- the primary figure of a row (mbdata.py) ------------------------------------ */

/* A column as a finite number, NAN when empty, absent or not one (mbcsv.num). */
static double num(seq_get_fn *get, const void *row, const char *col)
{
    const char *v = get(row, col);
    if (!v || !*v)
        return NAN;
    char *end;
    double x = strtod(v, &end);
    return end != v && !*end && isfinite(x) ? x : NAN;
}

/* mbdata.same_window: do the figure and the counts cover one window? */
static bool same_window(seq_get_fn *get, const void *row)
{
    const char *wl = get(row, "workload");
    if (!wl || strcmp(wl, "exec"))
        return true;
    const char *m = get(row, "workload_metrics");
    for (const char *p = m ? m : ""; *p;) { /* "a=1;region=marked;..." */
        size_t len = strcspn(p, ";");
        if (len > 7 && !strncmp(p, "region=", 7))
            return len == 13 && !strncmp(p + 7, "marked", 6);
        p += len + (p[len] == ';');
    }
    double reg = num(get, row, "region_wall_s"), whole = num(get, row, "total_wall_s");
    return !isnan(reg) && !isnan(whole) && reg < whole;
}

/* mbdata.work's amount: MiB of region_bytes, 1 per run, units of a rate figure
 * (its value times the region's wall time), else 1 per sample; NAN: unknown. */
static double work_amount(seq_get_fn *get, const void *row)
{
    const double mib = 1024.0 * 1024.0;
    double b = num(get, row, "region_bytes");
    if (!isnan(b) && b != 0)
        return b / mib;
    const char *unit = get(row, "throughput_unit");
    size_t n = unit ? strlen(unit) : 0;
    bool rate = n >= 2 && !strcmp(unit + n - 2, "/s");
    if ((unit && !strcmp(unit, "runs/s")) || (rate && !same_window(get, row)))
        return 1.0;
    if (rate && n > 2) {
        double t = num(get, row, "throughput"), wall = num(get, row, "region_wall_s");
        if (isnan(t) || isnan(wall) || t == 0 || wall == 0)
            return NAN;
        return !strcmp(unit, "B/s") ? t * wall / mib : t * wall;
    }
    return 1.0;
}

double seq_figure_value(bool cpu, bool idle_region, seq_get_fn *get, const void *row)
{
    if (!cpu)
        return num(get, row, "throughput");
    double u = num(get, row, idle_region ? "total_user_s" : "region_user_s");
    double s = num(get, row, idle_region ? "total_sys_s" : "region_sys_s");
    return (u + s) / work_amount(get, row); /* NAN propagates: not measured */
}
