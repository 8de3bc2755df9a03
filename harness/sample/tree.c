/* tree.c - the memory of a sample's process tree: the sum of Pss (the
 * process's share of each page it maps, shared pages divided among their
 * users), Anonymous and AnonHugePages over the process started and every
 * descendant, the tree listed again at each reading, and each process's
 * THP_enabled (contract: tree.h). */
#include "tree.h"
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    pid_t pid, ppid;
} link_t;

/* The parent of pid (spawn_proc_stat); -1 when it is gone or a zombie
 * (which maps nothing). */
static pid_t parent_of(pid_t pid)
{
    char buf[512], *f, state;
    long pp;
    if (spawn_proc_stat(pid, buf, sizeof buf, &f) || sscanf(f, " %c %ld", &state, &pp) != 2 || state == 'Z' ||
        state == 'X')
        return -1;
    return (pid_t)pp;
}

/* The KiB after "\nNAME:" in buf, or -1. */
static long kib_field(const char *buf, const char *name)
{
    char key[40];
    snprintf(key, sizeof key, "\n%s:", name);
    const char *p = strstr(buf, key);
    long kib;
    if (!p || sscanf(p + strlen(key), " %ld", &kib) != 1)
        return -1;
    return kib;
}

/* pid's Pss, Anonymous and AnonHugePages from /proc/PID/smaps_rollup into r
 * (added); -1 when it is gone or the kernel has no rollup. */
static int rollup_add(pid_t pid, tree_reading_t *r)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    long pss = kib_field(buf, "Pss"), anon = kib_field(buf, "Anonymous"), huge = kib_field(buf, "AnonHugePages");
    if (pss < 0)
        return -1;
    r->pss_kib += pss;
    r->anon_kib += anon > 0 ? anon : 0;
    r->anon_huge_kib += huge > 0 ? huge : 0;
    return 0;
}

/* THP_enabled of pid (/proc/PID/status): 1 on, 0 off (PR_SET_THP_DISABLE),
 * -1 unreadable (gone, or a kernel before 5.0). */
static int thp_enabled(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "re");
    int on = -1;
    if (!f)
        return -1;
    while (on < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, "THP_enabled:", 12))
            on = atoi(line + 12) != 0;
    fclose(f);
    return on;
}

/* The tree under root from a listing of /proc: its pids into *in (malloc'd,
 * root first, breadth-first), their number, or -errno. */
static long tree_list(pid_t root, pid_t **in)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -errno;
    size_t n = 0, cap = 256;
    link_t *links = malloc(cap * sizeof *links);
    if (!links) {
        closedir(d);
        return -ENOMEM;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10), pp = parent_of(pid);
        if (pp < 0)
            continue;
        if (n == cap) {
            link_t *more = realloc(links, 2 * cap * sizeof *links);
            if (!more)
                break; /* the processes listed so far */
            links = more;
            cap *= 2;
        }
        links[n++] = (link_t){pid, pp};
    }
    closedir(d);
    /* the tree: root, then each process whose parent is in it (a breadth-first
     * walk over the list: in[] holds the tree's pids in the order found) */
    *in = malloc((n + 1) * sizeof **in);
    if (!*in) {
        free(links);
        return -ENOMEM;
    }
    size_t m = 0;
    (*in)[m++] = root;
    for (size_t head = 0; head < m; head++)
        for (size_t i = 0; i < n; i++)
            if (links[i].ppid == (*in)[head] && links[i].pid != root)
                (*in)[m++] = links[i].pid;
    free(links);
    return (long)m;
}

bool tree_thp_word(const char *name, char *buf, size_t len)
{
    char path[128], line[256];
    snprintf(path, sizeof path, "/sys/kernel/mm/transparent_hugepage/%s", name);
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!ok)
        return false;
    line[strcspn(line, "\n")] = '\0';
    char *l = strchr(line, '['), *r = l ? strchr(l, ']') : NULL;
    if (l && r)
        snprintf(buf, len, "%.*s", (int)(r - l - 1), l + 1);
    else
        snprintf(buf, len, "%s", line);
    return true;
}

int tree_read(pid_t root, bool alone, tree_reading_t *r, pid_t *pids, size_t maxpids)
{
    memset(r, 0, sizeof *r);
    pid_t one = root, *in = &one;
    long m = alone ? 1 : tree_list(root, &in);
    if (m < 0)
        return (int)m;
    int rc = -ESRCH;
    for (long i = 0; i < m; i++) {
        if (rollup_add(in[i], r))
            continue; /* gone between the listing and the read, or a kernel thread */
        int on = thp_enabled(in[i]);
        r->thp_read += on >= 0;
        r->thp_off += on == 0;
        if (on == 1 && !r->thp_on_pid)
            r->thp_on_pid = in[i];
        if (pids && r->nproc < maxpids)
            pids[r->nproc] = in[i];
        r->nproc++;
        rc = 0;
    }
    if (in != &one)
        free(in);
    return rc;
}
