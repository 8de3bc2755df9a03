/* tree.c - the memory of a sample's process tree: the sum of Pss (the
 * process's share of each page it maps, shared pages divided among their
 * users) over the process started and every descendant, the tree listed
 * again at each reading (contract: tree.h). */
#include "tree.h"
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* Pss of pid in KiB from /proc/PID/smaps_rollup; -1 when it is gone or the
 * kernel has no rollup. */
static long pss_of(pid_t pid)
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
    const char *p = strstr(buf, "\nPss:");
    long kib;
    if (!p || sscanf(p + 5, " %ld", &kib) != 1)
        return -1;
    return kib;
}

int tree_pss_kib(pid_t root, long *kib, unsigned *nproc, pid_t *pids, size_t maxpids)
{
    *kib = 0;
    *nproc = 0;
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
    pid_t *in = malloc((n + 1) * sizeof *in);
    if (!in) {
        free(links);
        return -ENOMEM;
    }
    size_t m = 0;
    in[m++] = root;
    for (size_t head = 0; head < m; head++)
        for (size_t i = 0; i < n; i++)
            if (links[i].ppid == in[head] && links[i].pid != root)
                in[m++] = links[i].pid;
    int rc = -ESRCH;
    for (size_t i = 0; i < m; i++) {
        long k = pss_of(in[i]);
        if (k < 0)
            continue; /* gone between the listing and the read, or a kernel thread */
        *kib += k;
        if (pids && *nproc < maxpids)
            pids[*nproc] = in[i];
        (*nproc)++;
        rc = 0;
    }
    free(in);
    free(links);
    return rc;
}
