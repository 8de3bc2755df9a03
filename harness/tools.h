/* tools.h - finding the harness's own parts.  mallocbench-worker and
 * libmbprobe.so: beside this program (the build tree), else in the libexec
 * directory relative to it (an install, wherever it was moved).  The python
 * scripts it runs: the installed data directory, else the source tree. */
#ifndef MB_TOOLS_H
#define MB_TOOLS_H
#include "sample.h"

#include <stddef.h>

/* Fill o->worker and o->probe (given by --worker/--probe, else found) and
 * check them: 0, or 2 after one line naming every place looked in. */
int find_tools(run_opts_t *o, char *worker, char *probe, size_t len);
/* The path of the script NAME (e.g. "compare.py") into out: 0, or 2 after
 * one line naming every place looked in. */
int tools_find_script(const char *name, char *out, size_t len);

#endif
