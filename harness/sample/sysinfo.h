/* sysinfo.h - the machine a run was measured on, for the JSON sidecar:
 * CPU, cores, memory, kernel, THP mode, glibc, perf_event_paranoid and the
 * project's git commit.  Missing facts are null, never guessed. */
#ifndef MB_SYSINFO_H
#define MB_SYSINFO_H
#include <stdio.h>

/* Write a JSON string literal (with quotes), escaped. */
void sysinfo_json_string(FILE *out, const char *s);
/* Write the "machine" object's members (no braces), indented by two. */
void sysinfo_write_machine(FILE *out);
/* The source tree's commit ("<sha>" or "<sha>-dirty"), or "" outside git. */
void sysinfo_git_commit(char *buf, size_t len);
void sysinfo_hostname(char *buf, size_t len);
/* /proc/cpuinfo's "model name", or "unknown cpu". */
void sysinfo_cpu_model(char *buf, size_t len);

#endif
