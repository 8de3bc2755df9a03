/* spawn.h - the one way the harness starts a process (run, profile, record,
 * verify, and later serve): fork, set the child up as the caller's spawn_t
 * says (descriptors, process group, death signal, CPUs, huge pages, the go-pipe), then
 * execve with an explicit environment, which prepare_env (sample.h) builds. */
#ifndef MB_SPAWN_H
#define MB_SPAWN_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* from: a descriptor of the harness (SPAWN_DEVNULL: /dev/null, read-only),
 * to: the number the child gets it under. */
#define SPAWN_DEVNULL (-2)
typedef struct {
    int from, to;
} spawn_fd_t;

typedef struct {
    const char *path;           /* what execve runs */
    char *const *argv;
    char *const *envp;          /* the child's whole environment */
    const spawn_fd_t *fds;      /* applied in order; every other descriptor is close-on-exec */
    size_t nfds;
    const cpu_set_t *cpus;      /* NULL: not pinned */
    bool group;                 /* leads its own process group (a kill of -pid kills what it starts) */
    int death_signal;           /* sent to it when the harness dies, even by SIGKILL; 0: none */
    int go_fd;                  /* -1: exec at once; else wait for a 'g' read from it */
    bool thp_disable;           /* transparent huge pages off for it and all it starts
                                 * (PR_SET_THP_DISABLE: inherited across fork and execve) */
    const char *exec_fail;      /* written to its stderr when execve fails (NULL: nothing) ... */
    bool exec_fail_errno;       /* ... followed by ": <strerror>" */
    int *fail_fd;               /* non-NULL: gets a descriptor from which, once the child
                                 * has ended, spawn_failure reads why it never ran its program */
} spawn_t;

/* Starts the child; 0 with its pid, or -errno when fork failed.  The child
 * exits 126 when it cannot be set up (or the go-pipe closes without 'g'),
 * 125 when it cannot be pinned, 127 when execve fails.  SIGINT, SIGQUIT,
 * SIGTERM and SIGPIPE are at their defaults in it, whatever the harness
 * does with them. */
int spawn_start(const spawn_t *sp, pid_t *pid);

/* A child of ours that runs fn(ctx) instead of a program (fn never returns: it _exits), with
 * death_signal sent to it when the harness dies (0: none): 0 with its pid, or -errno. */
int spawn_call(void (*fn)(void *ctx), void *ctx, int death_signal, pid_t *pid);
/* Why the child of spawn_start never ran its program: 0 with the step
 * ("set up its descriptors", "execute '/usr/bin/env'") in what and its
 * errno in *err, or -ENOENT when it did run it (or the reason is not
 * known).  Read once the child has ended; the caller closes fd. */
int spawn_failure(int fd, char *what, size_t len, int *err);

/* /proc/PID/stat read into buf (len bytes): 0 with *fields at what follows
 * the command name (" S PPID ...", field 3 on), or -errno.  A process's
 * parent, state and CPU times all come from here. */
int spawn_proc_stat(pid_t pid, char *buf, size_t len, char **fields);

/* Makes the harness the reaper of every orphan its children leave behind
 * (PR_SET_CHILD_SUBREAPER): a daemon that a sample starts with setsid or a
 * double fork reparents to us, not to init, so spawn_kill_stragglers finds
 * it.  0, or -errno. */
int spawn_subreaper(void);

/* Our children now, up to max of them (the ones to leave alone later):
 * how many were found, or -errno. */
int spawn_children(pid_t *pids, size_t max);

/* Kills (SIGKILL) and reaps every child of ours not in keep[0..nkeep),
 * again and again until none is left, so that the descendants of a killed
 * one, which reparent to us, go too.  Returns how many were still running
 * (zombies are only reaped, not counted). */
unsigned spawn_kill_stragglers(const pid_t *keep, size_t nkeep);
/* The same, calling seen(pid, ctx) for each live straggler before it is
 * killed (while its /proc entry can still be read). */
unsigned spawn_kill_stragglers_seen(const pid_t *keep, size_t nkeep, void (*seen)(pid_t, void *), void *ctx);

#endif
