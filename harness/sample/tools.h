/* tools.h - finding the harness's own parts.  mallocbench-worker and
 * libmbprobe.so: beside this program (the build tree), else in the libexec
 * directory relative to it (an install, wherever it was moved).  The Python
 * package whose modules it runs (compare, tune, flamegraph): the installed
 * one (python's purelib relative to it), else the source tree's scripts/. */
#ifndef MB_TOOLS_H
#define MB_TOOLS_H
#include "types.h"

#include <stddef.h>

/* Fill o->worker and o->probe (given by --worker/--probe, else found) and
 * check them: 0, or 2 after one line naming every place looked in. */
int tools_find(run_opts_t *o, char *worker, char *probe, size_t len);
/* "PYTHONPATH=<that directory>[:<ours>]" into out, for a child's
 * environment: 0, or 2 after one line. */
int tools_python_env(char *out, size_t len);
/* Become `python3 -m mallocbench.MODULE ARGS...` (the first python3 of
 * /usr/bin, /usr/local/bin, PATH), the package's directory first on its
 * PYTHONPATH and MB_HARNESS naming this program (for the schema): returns
 * only on failure, 2 after one line. */
int tools_exec_python(const char *module, int nargs, char *const *args);

#endif
