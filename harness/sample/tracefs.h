/* tracefs.h - the one lookup of the kernel's tracing file system, where the tracepoints'
 * ids and formats are read: counters' tracepoint events and syscall columns, execs, run
 * --profile's syscall events and diagnose's rings all ask here, by one policy:
 * /sys/kernel/tracing, else the older /sys/kernel/debug/tracing, whichever has an events/
 * folder; when the first is absent and we are root, tracefs is mounted there.  Looked up
 * once per process (thread-safe). */
#ifndef MB_TRACEFS_H
#define MB_TRACEFS_H

/* The tracefs folder in use, or NULL when there is none. */
const char *tracefs_dir(void);
/* Why tracefs_dir() is NULL, one line for a message ("tracefs not available: ..."); "" when
 * it is not. */
const char *tracefs_why(void);

#endif
