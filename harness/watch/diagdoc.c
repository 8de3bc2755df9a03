/* diagdoc.c - diagnose's document, written from the page model, the rings' statistics and
 * each image's reading, every key named through DIAGDOC_KEYS (diagdoc.h); and that table
 * printed for `mallocbench schema --diagnose`.  The document's bytes depend only on its
 * inputs: the same model and options give the same document. */
#include "diagdoc.h"
#include "registry.h"
#include "text.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SERIES_OUT 200 /* replay points written per process */
#define ALL_OUT 200    /* processes written by --all (the busiest) */

static const struct {
    const char *key;
    diagdoc_key_t parent;
    diagdoc_type_t type;
    const char *meaning;
} keys[DK_COUNT] = {
#define DIAGDOC_ROW(id, parent, key, type, meaning) [DK_##id] = {key, DK_##parent, type, meaning},
    DIAGDOC_KEYS(DIAGDOC_ROW)
#undef DIAGDOC_ROW
};

#define DIAGDOC_NAME(n) #n,
static const char *const call_names[] = {DIAGDOC_CALLS(DIAGDOC_NAME)};
static const char *const class_names[] = {DIAGDOC_CLASSES(DIAGDOC_NAME)};
static const char *const by_names[] = {DIAGDOC_BYS(DIAGDOC_NAME)};
static const char *const at_names[] = {DIAGDOC_ATS(DIAGDOC_NAME)};
static const char *const kept_names[] = {DIAGDOC_KEPTS(DIAGDOC_NAME)};
#undef DIAGDOC_NAME
#define NELEM(a) (sizeof a / sizeof *a)
_Static_assert(NELEM(call_names) == PR_NSYS, "DIAGDOC_CALLS names every pr_sys_t");
_Static_assert(NELEM(class_names) == PM_NCLASS, "DIAGDOC_CLASSES names every pm_class_t");
_Static_assert(NELEM(by_names) == PM_NBY, "DIAGDOC_BYS names every pm_by_t");
_Static_assert(NELEM(at_names) == PR_NAT, "DIAGDOC_ATS names every pr_at_t");
_Static_assert(NELEM(kept_names) == NELEM(((pm_proc_t *)0)->kept), "DIAGDOC_KEPTS names every kept[]");

static const struct {
    const char *placeholder, *const *names;
    size_t n;
    const char *what;
} sets[] = {
    {"{call}", call_names, NELEM(call_names), "a give-back call (mmap_fixed: mmap(MAP_FIXED) over pages in use)"},
    {"{class}", class_names, NELEM(class_names), "a fault's class"},
    {"{by}", by_names, NELEM(by_names), "the call that gave a page back, as a keep setting stops it"},
    {"{at}", at_names, NELEM(at_names), "where a cpu-clock sample fell"},
    {"{kept}", kept_names, NELEM(kept_names), "bytes given back by madvise only, or by any call"},
};

/* The set a "{set}" key stands for (NULL: a plain key). */
static const char *const *set_names(diagdoc_key_t id, size_t *n)
{
    for (size_t i = 0; i < NELEM(sets); i++)
        if (!strcmp(keys[id].key, sets[i].placeholder)) {
            *n = sets[i].n;
            return sets[i].names;
        }
    *n = 0;
    return NULL;
}

/* ---- writing keys by id ------------------------------------------------------------------- */

/* pre, then "KEY": (the i-th name of a {set} key). */
static void key(FILE *f, const char *pre, diagdoc_key_t id)
{
    fprintf(f, "%s\"%s\": ", pre, keys[id].key);
}

static void set_key(FILE *f, const char *pre, diagdoc_key_t id, size_t i)
{
    size_t n;
    const char *const *names = set_names(id, &n);
    fprintf(f, "%s\"%s\": ", pre, names && i < n ? names[i] : "?");
}

static void k_u(FILE *f, const char *pre, diagdoc_key_t id, uint64_t v)
{
    key(f, pre, id);
    fprintf(f, "%llu", (unsigned long long)v);
}

static void k_i(FILE *f, const char *pre, diagdoc_key_t id, long long v)
{
    key(f, pre, id);
    fprintf(f, "%lld", v);
}

static void k_b(FILE *f, const char *pre, diagdoc_key_t id, bool v)
{
    key(f, pre, id);
    fputs(v ? "true" : "false", f);
}

static void k_s(FILE *f, const char *pre, diagdoc_key_t id, const char *v)
{
    key(f, pre, id);
    text_json_write(f, v ? v : "");
}

/* A number with fmt; a number or null: %.17g, null where not finite. */
static void k_f(FILE *f, const char *pre, diagdoc_key_t id, const char *fmt, double v)
{
    key(f, pre, id);
    fprintf(f, fmt, v);
}

static void k_null(FILE *f, const char *pre, diagdoc_key_t id, double v)
{
    key(f, pre, id);
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static void k_strs(FILE *f, const char *pre, diagdoc_key_t id, const char *const *v, size_t n)
{
    key(f, pre, id);
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, v[i]);
    fputc(']', f);
}

/* "KEY": {"NAME": v[0], ...}: a {set} key's object of counts. */
static void k_counts(FILE *f, const char *pre, diagdoc_key_t obj, diagdoc_key_t each, const uint64_t *v, size_t n)
{
    key(f, pre, obj);
    fputc('{', f);
    for (size_t i = 0; i < n; i++)
        set_key(f, i ? ", " : "", each, i), fprintf(f, "%llu", (unsigned long long)v[i]);
    fputc('}', f);
}

/* ---- a process's counts ------------------------------------------------------------------- */

static const char *advice_name(unsigned a)
{
    static const char *const names[] = {
        [0] = "MADV_NORMAL", [1] = "MADV_RANDOM", [2] = "MADV_SEQUENTIAL", [3] = "MADV_WILLNEED",
        [4] = "MADV_DONTNEED", [8] = "MADV_FREE", [9] = "MADV_REMOVE", [10] = "MADV_DONTFORK",
        [11] = "MADV_DOFORK", [12] = "MADV_MERGEABLE", [13] = "MADV_UNMERGEABLE",
        [14] = "MADV_HUGEPAGE", [15] = "MADV_NOHUGEPAGE", [16] = "MADV_DONTDUMP", [17] = "MADV_DODUMP",
        [18] = "MADV_WIPEONFORK", [19] = "MADV_KEEPONFORK", [20] = "MADV_COLD", [21] = "MADV_PAGEOUT",
        [22] = "MADV_POPULATE_READ", [23] = "MADV_POPULATE_WRITE", [24] = "MADV_DONTNEED_LOCKED",
        [25] = "MADV_COLLAPSE",
    };
    return a < sizeof names / sizeof names[0] && names[a] ? names[a] : "other";
}

static void write_faults(FILE *f, const pm_proc_t *p)
{
    key(f, "", DK_proc_faults);
    k_u(f, "{", DK_proc_faults_minor, p->faults - p->majors);
    k_u(f, ", ", DK_proc_faults_major, p->majors);
    for (int c = 0; c < PM_NCLASS; c++)
        set_key(f, ", ", DK_proc_faults_class, (size_t)c), fprintf(f, "%llu", (unsigned long long)p->cls[c]);
    key(f, ", ", DK_proc_faults_refault_age);
    fputc('[', f);
    for (int b = 0; b < PM_NAGES; b++)
        fprintf(f, "%s%llu", b ? ", " : "", (unsigned long long)p->age[b]);
    fputc(']', f);
    k_u(f, ", ", DK_proc_faults_refault_pages, p->refault_pages);
    k_u(f, ", ", DK_proc_faults_alloc_refault_pages, p->alloc_refault_pages);
    k_u(f, ", ", DK_proc_faults_alloc_refault_whole, p->alloc_refault_whole);
    k_u(f, ", ", DK_proc_faults_alloc_whole_blocks, p->alloc_whole_blocks);
    k_u(f, ", ", DK_proc_faults_first_after_unmap, p->first_after_unmap);
    k_counts(f, ", ", DK_proc_faults_refault_by, DK_proc_faults_refault_by_call, p->refault_by, PM_NBY);
    k_counts(f, ", ", DK_proc_faults_alloc_refault_by, DK_proc_faults_alloc_refault_by_call, p->alloc_refault_by,
             PM_NBY);
    fputc('}', f);
}

static void write_counts(FILE *f, const pm_proc_t *p)
{
    write_faults(f, p);
    key(f, ", ", DK_proc_calls);
    fputc('{', f);
    for (int s = 0; s < PR_NSYS; s++) {
        set_key(f, s ? ", " : "", DK_proc_call, (size_t)s);
        k_u(f, "{", DK_proc_call_calls, p->calls[s]);
        k_u(f, ", ", DK_proc_call_bytes, p->bytes[s]);
        k_u(f, ", ", DK_proc_call_alloc_calls, p->alloc_calls[s]);
        k_u(f, ", ", DK_proc_call_alloc_bytes, p->alloc_bytes[s]);
        fputc('}', f);
    }
    key(f, "}, ", DK_proc_advice);
    fputc('[', f);
    for (unsigned a = 0, k = 0; a <= PM_NADVICE; a++)
        if (p->advice_calls[a]) {
            k_s(f, k++ ? ", {" : "{", DK_proc_advice_advice, a == PM_NADVICE ? "other" : advice_name(a));
            k_u(f, ", ", DK_proc_advice_calls, p->advice_calls[a]);
            k_u(f, ", ", DK_proc_advice_bytes, p->advice_bytes[a]);
            fputc('}', f);
        }
    k_u(f, "], ", DK_proc_failed_calls, p->failed);
    k_u(f, ", ", DK_proc_lazy_bytes, p->lazy_bytes);
    k_u(f, ", ", DK_proc_untracked_bytes, p->untracked_bytes);
    key(f, ", ", DK_proc_cpu);
    k_u(f, "{", DK_proc_cpu_all, p->samples);
    for (int a = 0; a < PR_NAT; a++)
        set_key(f, ", ", DK_proc_cpu_at, (size_t)a), fprintf(f, "%llu", (unsigned long long)p->at[a]);
    k_counts(f, ", ", DK_proc_cpu_giveback_by, DK_proc_cpu_giveback_call, p->at_sys, PR_NSYS);
    fputc('}', f);
}

static int cmp_lib(const void *a, const void *b)
{
    const pm_lib_t *x = a, *y = b;
    return (x->samples < y->samples) - (x->samples > y->samples);
}

/* Every file that took a sample, the most first (each file its own count); ids: the list,
 * its lib and samples keys. */
static void write_libs(FILE *f, const pm_model_t *m, const diagdoc_key_t ids[3], const pm_libs_t *libs)
{
    pm_lib_t *v = libs->n ? malloc(libs->n * sizeof *v) : NULL;
    size_t n = v ? libs->n : 0;
    if (v) {
        memcpy(v, libs->v, n * sizeof *v);
        qsort(v, n, sizeof *v, cmp_lib);
    }
    key(f, "", ids[0]);
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        k_s(f, i ? ", {" : "{", ids[1], v[i].name ? pm_lib_name(m, v[i].name) : "(anonymous or unknown)");
        k_u(f, ", ", ids[2], v[i].samples);
        fputc('}', f);
    }
    uint64_t unkept = libs->unkept;
    for (size_t i = 0; !v && i < libs->n; i++) /* no room to sort: the counts, not told apart */
        unkept += libs->v[i].samples;
    if (unkept) {
        k_s(f, n ? ", {" : "{", ids[1], "(not told apart: out of memory)");
        k_u(f, ", ", ids[2], unkept);
        fputc('}', f);
    }
    fputc(']', f);
    free(v);
}

static void write_replay(FILE *f, const pm_proc_t *p)
{
    key(f, "", DK_proc_kept);
    fputc('{', f);
    k_counts(f, "", DK_proc_kept_peak, DK_proc_kept_peak_by, p->peak, NELEM(p->peak));
    k_counts(f, ", ", DK_proc_kept_end, DK_proc_kept_end_by, p->kept, NELEM(p->kept));
    key(f, ", ", DK_proc_kept_series);
    fputc('[', f);
    size_t step = p->nseries > SERIES_OUT ? (p->nseries + SERIES_OUT - 1) / SERIES_OUT : 1;
    for (size_t i = 0, k = 0; i < p->nseries; i++)
        if (i % step == 0 || i + 1 == p->nseries)
            fprintf(f, "%s[%.6f, %llu, %llu]", k++ ? ", " : "", (double)p->series[i].t / 1e9,
                    (unsigned long long)p->series[i].kept[0], (unsigned long long)p->series[i].kept[1]);
    fputs("]}", f);
}

/* ---- a process's allocator ---------------------------------------------------------------- */

typedef struct {
    const char *files[1024];
    size_t n;
} files_t;

static void add_file(void *ctx, const char *path)
{
    files_t *fl = ctx;
    for (size_t i = 0; i < fl->n; i++)
        if (!strcmp(fl->files[i], path))
            return;
    if (fl->n < sizeof fl->files / sizeof fl->files[0])
        fl->files[fl->n++] = path;
}

/* How `mallocbench exec` would start this image's allocator as it started: the library where it
 * is not the family's own (exec -a FAMILY:PATH), the settings its variables gave, as -t takes
 * them, and what of those variables no tunable says (exec cannot set it). */
static void write_exec(FILE *f, const ident_t *id)
{
    const alloc_info_t *a = id->family;
    char own[PATH_MAX] = "", real[PATH_MAX] = "", set[IDENT_MAX_VARS * 4][160], left[IDENT_MAX_VARS * 4][512];
    size_t nset = 0, nleft = 0;
    if (a && !alloc_is_system(a) && id->path[0] &&
        (alloc_locate(a, own, sizeof own) || !realpath(own, real) || strcmp(real, id->path)))
        snprintf(real, sizeof real, "%s", id->path);
    else
        real[0] = '\0';
    ident_exec_settings(a, (const char (*)[512])id->vars, id->nvars, set, sizeof set / sizeof *set, &nset, left,
                        sizeof left / sizeof *left, &nleft);
    key(f, ", ", DK_proc_alloc_as_exec);
    k_s(f, "{", DK_proc_alloc_as_exec_library, real);
    key(f, ", ", DK_proc_alloc_as_exec_settings);
    fputc('[', f);
    for (size_t i = 0; i < nset; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, set[i]);
    key(f, "], ", DK_proc_alloc_as_exec_not_settable);
    fputc('[', f);
    for (size_t i = 0; i < nleft; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, left[i]);
    fputs("]}", f);
}

/* The family's keep setting: what it sets, by which variables, and the calls it stops. */
static void write_keep(FILE *f, const alloc_info_t *a)
{
    key(f, ", ", DK_proc_alloc_keep);
    if (!a || !a->keep) {
        fputs("null", f);
        return;
    }
    alloc_setting_t s[8];
    alloc_env_t envset;
    size_t ns = 0;
    char err[256], buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", a->keep);
    for (char *tok = strtok_r(buf, ",", &save); tok && ns < 8; tok = strtok_r(NULL, ",", &save))
        if (!alloc_parse_setting(a, tok, &s[ns], err, sizeof err))
            ns++;
    memset(&envset, 0, sizeof envset);
    alloc_build_env(a, s, ns, &envset);
    k_s(f, "{", DK_proc_alloc_keep_setting, a->keep);
    key(f, ", ", DK_proc_alloc_keep_settings);
    fputc('[', f);
    for (size_t i = 0; i < ns; i++)
        fprintf(f, "%s\"%s=%s\"", i ? ", " : "", s[i].t->name, s[i].value);
    /* a variable the process set already gains ours, joined by this */
    k_s(f, "], ", DK_proc_alloc_keep_joined_by, a->conf.var ? a->conf.sep : "");
    key(f, ", ", DK_proc_alloc_keep_env);
    fputc('[', f);
    for (size_t i = 0; i < envset.n; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, envset.var[i]);
    fputc(']', f);
    key(f, ", ", DK_proc_alloc_keep_stops);
    fputc('[', f);
    for (int b = 0, k = 0; b < PM_NBY; b++)
        if (a->keep_stops & (1u << b))
            fprintf(f, "%s\"%s\"", k++ ? ", " : "", by_names[b]);
    fputs("]}", f);
}

/* What ident_read takes of image p: its files, its program, its environment (the reading taken
 * while it ran; a command's first image that ended unread: what diagnose gave it).  *env: a
 * block made here (freed and wiped by the caller); *from: where the environment came from. */
static void allocator_input(const pm_model_t *m, const pm_proc_t *p, const diagdoc_in_t *in, files_t *fl,
                            ident_input_t *id_in, ident_exe_t **own, char **env, const char **from)
{
    pm_files(m, p, add_file, fl);
    const ident_capture_t *cap = in->capture ? in->capture(in->capture_ctx, p->idx) : NULL;
    /* a command's first image that ended before it was read: the file the user named */
    const ident_exe_t *exe = cap && !cap->exe_rc ? &cap->exe : NULL;
    bool command = in->mode == DIAGDOC_COMMAND && p->pid == in->pid;
    if (!exe && command && !p->forked_child && (*own = malloc(sizeof **own)) && !ident_exe_path(in->exe_path, *own))
        exe = *own;
    *id_in = (ident_input_t){fl->files, fl->n, exe, NULL, 0, cap && cap->conf[0] ? cap->conf : NULL};
    *from = "none";
    if (cap && cap->env)
        id_in->environ = cap->env, id_in->environ_len = cap->env_len, *from = "process";
    /* an image of the command that ended: the environment diagnose gave it (an image that
     * changed its own before exec is not seen) */
    if (!id_in->environ && command) { /* the command got our environment (or -a's): as a block */
        static char ownblock[1] = "";
        size_t len = 0, envlen = 0;
        for (char *const *e = in->envp; e && *e; e++)
            len += strlen(*e) + 1;
        *env = malloc(len ? len : 1);
        for (char *const *e = in->envp; *env && e && *e; e++)
            memcpy(*env + envlen, *e, strlen(*e) + 1), envlen += strlen(*e) + 1;
        id_in->environ = *env ? *env : ownblock, id_in->environ_len = envlen;
        *from = "command";
    }
}

static void write_allocator(FILE *f, const pm_model_t *m, const pm_proc_t *p, const diagdoc_in_t *in)
{
    files_t fl = {.n = 0};
    ident_input_t id_in;
    ident_exe_t *own = NULL;
    char *env = NULL;
    const char *env_from;
    allocator_input(m, p, in, &fl, &id_in, &own, &env, &env_from);
    ident_t id;
    ident_read(&id_in, &id);
    if (env)
        memset(env, 0, id_in.environ_len); /* no environment stays in memory */
    free(env);
    free(own);
    key(f, "", DK_proc_alloc);
    k_s(f, "{", DK_proc_alloc_family, id.family ? id.family->name : "");
    k_b(f, ", ", DK_proc_alloc_sure, id.sure);
    k_s(f, ", ", DK_proc_alloc_how, id.how);
    k_s(f, ", ", DK_proc_alloc_evidence, id.evidence);
    k_s(f, ", ", DK_proc_alloc_path, id.path);
    k_s(f, ", ", DK_proc_alloc_version, id.version);
    k_s(f, ", ", DK_proc_alloc_version_how, id.version_how);
    k_b(f, ", ", DK_proc_alloc_environment_read, id_in.environ != NULL);
    k_s(f, ", ", DK_proc_alloc_environment_from, env_from);
    key(f, ", ", DK_proc_alloc_vars);
    fputc('[', f);
    for (size_t i = 0; i < id.nvars; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, id.vars[i]);
    k_s(f, "], ", DK_proc_alloc_malloc_conf_file, id.malloc_conf_file);
    k_s(f, ", ", DK_proc_alloc_malloc_conf_compiled, id.malloc_conf_compiled);
    write_exec(f, &id);
    write_keep(f, id.family);
    k_s(f, ", ", DK_proc_alloc_huge_advise, id.family && id.family->huge_advise ? id.family->huge_advise : "");
    k_s(f, ", ", DK_proc_alloc_huge_none, id.family && id.family->huge_none ? id.family->huge_none : "");
    fputc('}', f);
}

/* ---- the document ------------------------------------------------------------------------- */

/* /proc at one end of the window; ids: the object and its five keys. */
static void write_pstat(FILE *f, const diagdoc_key_t ids[6], const diagdoc_pstat_t *s)
{
    key(f, ", ", ids[0]);
    if (!s->ok) {
        fputs("null", f);
        return;
    }
    k_f(f, "{", ids[1], "%.3f", s->utime_s);
    k_f(f, ", ", ids[2], "%.3f", s->stime_s);
    k_u(f, ", ", ids[3], s->rss_kib);
    k_u(f, ", ", ids[4], s->anon_huge_kib);
    k_u(f, ", ", ids[5], s->anon_kib);
    fputc('}', f);
}

static void write_proc(FILE *f, const pm_model_t *m, const pm_proc_t *p, const diagdoc_in_t *in, bool main_image)
{
    static const diagdoc_key_t fault_libs[3] = {DK_proc_fault_libs, DK_proc_fault_libs_lib,
                                                DK_proc_fault_libs_samples};
    static const diagdoc_key_t giveback_libs[3] = {DK_proc_giveback_libs, DK_proc_giveback_libs_lib,
                                                   DK_proc_giveback_libs_samples};
    static const diagdoc_key_t start[6] = {DK_proc_start, DK_proc_start_utime_s, DK_proc_start_stime_s,
                                           DK_proc_start_rss_kib, DK_proc_start_anon_huge_kib, DK_proc_start_anon_kib};
    static const diagdoc_key_t end[6] = {DK_proc_end, DK_proc_end_utime_s, DK_proc_end_stime_s,
                                         DK_proc_end_rss_kib, DK_proc_end_anon_huge_kib, DK_proc_end_anon_kib};
    k_i(f, "{", DK_proc_pid, p->pid);
    k_u(f, ", ", DK_proc_image, p->idx);
    k_s(f, ", ", DK_proc_comm, p->comm);
    key(f, ", ", DK_proc_cmdline);
    fputc('[', f);
    /* as the reader took it while the image ran: its program's name, the rest counted
     * (arguments may carry secrets; --show-args keeps them) */
    const ident_capture_t *cap = in->capture ? in->capture(in->capture_ctx, p->idx) : NULL;
    const char *cl = cap ? cap->cmdline : "";
    size_t n = cap ? cap->cmdline_len : 0;
    for (size_t at = 0; at < n; at += strnlen(cl + at, n - at) + 1)
        fprintf(f, "%s", at ? ", " : ""), text_json_write(f, cl + at);
    k_u(f, "], ", DK_proc_args_hidden, cap ? cap->hidden_args : 0u);
    k_b(f, ", ", DK_proc_forked, p->forked_child);
    k_i(f, ", ", DK_proc_parent_image, p->parent_idx);
    k_b(f, ", ", DK_proc_ended, p->ended);
    k_f(f, ", ", DK_proc_seconds, "%.6f", (double)(p->end_t - p->start_t) / 1e9);
    fputs(", ", f);
    write_counts(f, p);
    fputs(", ", f);
    write_libs(f, m, fault_libs, &p->fault_libs);
    fputs(", ", f);
    write_libs(f, m, giveback_libs, &p->giveback_libs);
    fputs(", ", f);
    write_replay(f, p);
    fputs(", ", f);
    write_allocator(f, m, p, in);
    if (main_image) {
        write_pstat(f, start, &in->st0);
        write_pstat(f, end, &in->st1);
        key(f, ", ", DK_proc_peak);
        if (in->peak.ok) {
            k_u(f, "{", DK_proc_peak_anon_kib, in->peak.anon_kib);
            k_u(f, ", ", DK_proc_peak_anon_huge_kib, in->peak.anon_huge_kib);
            fputc('}', f);
        } else {
            fputs("null", f);
        }
    }
    fputc('}', f);
}

/* The order --all writes processes in: most cpu samples under faults and give-backs first. */
static const pm_model_t *sort_model;
static int cmp_loss(const void *a, const void *b)
{
    const pm_proc_t *x = pm_at(sort_model, *(const size_t *)a), *y = pm_at(sort_model, *(const size_t *)b);
    uint64_t lx = x->at[PR_AT_FAULT] + x->at[PR_AT_GIVEBACK], ly = y->at[PR_AT_FAULT] + y->at[PR_AT_GIVEBACK];
    if (lx != ly)
        return lx < ly ? 1 : -1;
    return (x->faults < y->faults) - (x->faults > y->faults);
}

static void write_target(FILE *f, const diagdoc_in_t *in)
{
    key(f, "", DK_target);
    k_i(f, "{", DK_target_pid, in->pid);
    k_b(f, ", ", DK_target_children, in->children);
    k_strs(f, ", ", DK_target_command, (const char *const *)in->cmd, (size_t)(in->ncmd > 0 ? in->ncmd : 0));
    k_strs(f, ", ", DK_target_exec_command, in->exec_cmd, in->nexec);
    key(f, ", ", DK_target_exec_dropped);
    fputc('[', f);
    for (size_t k = 0; k < in->ndropped; k++) { /* the variables' names, never their values */
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(in->dropped[k], "="), in->dropped[k]);
        fprintf(f, "%s", k ? ", " : ""), text_json_write(f, name);
    }
    fputc(']', f);
    k_s(f, ", ", DK_target_allocator, in->family ? in->family : ""); /* -a ("" the command's own) */
    k_strs(f, ", ", DK_target_tunables, in->tunables, in->ntun);
    k_i(f, ", ", DK_target_exit_status, in->exit_status);
    fputc('}', f);
}

static void write_watch(FILE *f, const pm_model_t *m, const pr_stats_t *st, const diagdoc_in_t *in)
{
    pr_stats_t ps = *st;
    key(f, ", ", DK_watch);
    k_u(f, "{", DK_watch_cpus, ps.ncpus);
    k_u(f, ", ", DK_watch_records, ps.records);
    k_u(f, ", ", DK_watch_lost, ps.lost);
    k_u(f, ", ", DK_watch_throttled, ps.throttled);
    k_b(f, ", ", DK_watch_kernel_symbols, ps.ksyms);
    k_u(f, ", ", DK_watch_cpu_period_ns, PR_CPU_PERIOD_NS);
    k_u(f, ", ", DK_watch_fault_period, in->fault_period ? in->fault_period : 1u);
    k_counts(f, ", ", DK_watch_other_calls, DK_watch_other_call, ps.other_calls, PR_NSYS);
    k_u(f, ", ", DK_watch_tlb_other_samples, pm_tlb_other(m));
    /* the bounds: the model's memory and its cap (--max-memory), records not taken after the
     * window's end or a stop signal; either makes every count a lower bound */
    k_u(f, ", ", DK_watch_model_bytes, pm_bytes(m));
    k_u(f, ", ", DK_watch_model_limit, in->model_limit);
    k_b(f, ", ", DK_watch_capped, pm_capped(m));
    k_u(f, ", ", DK_watch_dropped_records, pm_dropped(m));
    k_b(f, ", ", DK_watch_lower_bounds, pm_capped(m) || pm_dropped(m) || ps.lost);
    fputc('}', f);
}

void diagdoc_write(FILE *f, const pm_model_t *m, const pr_stats_t *ps, const diagdoc_in_t *in)
{
    static const char *const mode[] = {[DIAGDOC_PID] = "pid", [DIAGDOC_ALL] = "all", [DIAGDOC_COMMAND] = "command"};
    k_s(f, "{", DK_schema, DIAGDOC_SCHEMA);
    k_s(f, ", ", DK_mode, mode[in->mode]);
    fputs(", ", f);
    write_target(f, in);
    key(f, ", ", DK_window);
    k_i(f, "{", DK_window_started_unix, (long long)in->started);
    k_f(f, ", ", DK_window_seconds, "%.6f", in->seconds);
    k_s(f, ", ", DK_window_ended, in->end_reason);
    k_null(f, ", ", DK_window_thp_faults, in->thp_faults);
    k_null(f, ", ", DK_window_thp_fallbacks, in->thp_fallbacks);
    k_null(f, ", ", DK_window_thp_pmd_splits, in->thp_pmd_splits);
    fputc('}', f);
    write_watch(f, m, ps, in);
    k_null(f, ", ", DK_calibrate_fault_ns, in->calib_ns);
    k_null(f, ", ", DK_calibrate_refault_ns, in->calib_refault_ns);
    k_null(f, ", ", DK_calibrate_refault_sys_ns, in->calib_refault_sys_ns);
    k_null(f, ", ", DK_calibrate_huge_fault_ns, in->calib_huge_ns);
    k_null(f, ", ", DK_self_cpu_s, in->self_cpu_s);
    key(f, ", ", DK_procs);
    fputc('[', f);
    bool all = in->mode == DIAGDOC_ALL;
    size_t n = pm_count(m), *order = malloc((n ? n : 1) * sizeof *order), k = 0;
    for (size_t i = 0; order && i < n; i++) {
        const pm_proc_t *p = pm_at(m, i);
        if (!all || p->faults || p->samples || p->calls[PR_SYS_MADVISE] || p->calls[PR_SYS_MUNMAP])
            order[k++] = i;
    }
    sort_model = m;
    if (all)
        qsort(order, k, sizeof *order, cmp_loss);
    for (size_t j = 0; j < k && (!all || j < ALL_OUT); j++) {
        const pm_proc_t *p = pm_at(m, order[j]);
        fprintf(f, "%s", j ? ",\n" : "\n");
        write_proc(f, m, p, in, in->mode != DIAGDOC_ALL && p->pid == in->pid);
    }
    free(order);
    fputs("]}\n", f);
}

/* ---- the key table ------------------------------------------------------------------------ */

static const char *type_name(diagdoc_type_t t)
{
    static const char *const names[] = {
        [DD_TEXT] = "text", [DD_INT] = "integer", [DD_NUM] = "number", [DD_NUM_NULL] = "number or null",
        [DD_BOOL] = "boolean", [DD_OBJECT] = "object", [DD_OBJECT_NULL] = "object or null",
        [DD_LIST] = "list of objects", [DD_TEXTS] = "list of text", [DD_INTS] = "list of integers",
        [DD_SERIES] = "list of [number, integer, integer]",
    };
    return names[t];
}

/* Key id's path ("processes[].calls.{call}.bytes"), its {set}s as they are, or with the i-th
 * name of each set put in (names[depth], for the JSON). */
static void path_of(diagdoc_key_t id, char *out, size_t cap, const size_t *pick)
{
    diagdoc_key_t chain[16];
    int n = 0;
    for (diagdoc_key_t k = id; k != DK_root && n < 16; k = keys[k].parent)
        chain[n++] = k;
    size_t len = 0, depth = 0;
    out[0] = '\0';
    for (int i = n - 1; i >= 0 && len < cap; i--) {
        diagdoc_key_t k = chain[i];
        size_t nn;
        const char *const *names = set_names(k, &nn);
        const char *name = names && pick ? names[pick[depth++]] : keys[k].key;
        const char *sep = i == n - 1 ? "" : keys[keys[k].parent].type == DD_LIST ? "[]." : ".";
        len += (size_t)snprintf(out + len, cap - len, "%s%s", sep, name);
    }
}

void diagdoc_print_keys(FILE *out)
{
    fprintf(out, "# mallocbench diagnose's document, schema %s\n\n", DIAGDOC_SCHEMA);
    fprintf(out, "Generated by `mallocbench schema --diagnose` from harness/watch/diagdoc.h. The document\n"
                 "`mallocbench diagnose` hands to mallocbench.diagnose (its --json adds `analysis` and `words`).\n"
                 "A key written `{set}` stands for each name of the set:\n\n");
    for (size_t i = 0; i < NELEM(sets); i++) {
        fprintf(out, "- `%s`, %s:", sets[i].placeholder, sets[i].what);
        for (size_t j = 0; j < sets[i].n; j++)
            fprintf(out, " `%s`", sets[i].names[j]);
        fputc('\n', out);
    }
    fprintf(out, "\n| key | type | meaning |\n|---|---|---|\n");
    for (int id = 0; id < DK_COUNT; id++) {
        char path[256];
        path_of((diagdoc_key_t)id, path, sizeof path, NULL);
        fprintf(out, "| `%s` | %s | %s |\n", path, type_name(keys[id].type), keys[id].meaning);
    }
}

/* Every path of key id, each {set} on its path written out (odometer over the sets). */
static void print_paths_json(FILE *out, diagdoc_key_t id, bool *first)
{
    size_t nn[16], pick[16] = {0};
    int depth = 0;
    diagdoc_key_t chain[16];
    int n = 0;
    for (diagdoc_key_t k = id; k != DK_root && n < 16; k = keys[k].parent)
        chain[n++] = k;
    for (int i = n - 1; i >= 0; i--)
        if (set_names(chain[i], &nn[depth]))
            depth++;
    for (;;) {
        char path[256];
        path_of(id, path, sizeof path, pick);
        fprintf(out, "%s    {\"path\": ", *first ? "" : ",\n");
        *first = false;
        text_json_write(out, path);
        fprintf(out, ", \"type\": \"%s\", \"meaning\": ", type_name(keys[id].type));
        text_json_write(out, keys[id].meaning);
        fputc('}', out);
        int d = depth - 1;
        while (d >= 0 && ++pick[d] == nn[d])
            pick[d--] = 0;
        if (d < 0)
            return;
    }
}

void diagdoc_print_keys_json(FILE *out)
{
    fprintf(out, "{\n  \"schema\": ");
    text_json_write(out, DIAGDOC_SCHEMA);
    fprintf(out, ",\n  \"keys\": [\n");
    bool first = true;
    for (int id = 0; id < DK_COUNT; id++)
        print_paths_json(out, (diagdoc_key_t)id, &first);
    fprintf(out, "\n  ]\n}\n");
}
