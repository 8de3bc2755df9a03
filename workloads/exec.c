/* exec.c - the descriptor of the `exec` pseudo-workload (contract: exec.h).
 * The worker never runs it (no run function): the harness runs the command
 * itself, preloaded like the worker, checks it before any run and makes its
 * result (harness/sample/launch.c and the launcher table of harness/sample/sample.c). */
#include "exec.h"

static const wl_param_t exec_params[] = {
    {"metric", WLP_TEXT, "", 0, 0, NULL, "regex",
     "extended regex for a figure the command prints (its first group, or the first number "
     "from the match on; the last matching line wins); empty: throughput is 1 / time of the marked region (else of the whole command)"},
    {"unit", WLP_STRING, "", 0, 0, NULL, "text", "unit of the printed figure, e.g. ops/s"},
    {"better", WLP_ENUM, "higher", 0, 0, "higher|lower", "", "which way the printed figure is better"},
    {"cmd", WLP_TEXT, "", 0, 0, NULL, "words",
     "the command, as shell words (quotes, no expansion); one line of at most 255 characters"},
};

const wl_t wl_exec = {
    .name = "exec",
    .help = "a user's command (mallocbench exec -- CMD ARGS): the whole process tree from exec to "
            "exit, or the region it marks (include/mallocbench.h)",
    .params = exec_params,
    .nparams = sizeof exec_params / sizeof *exec_params,
    .metric = "runs per second (1 / time of the region the command marks, else of the whole command)",
    .smoke = "exec:cmd=sort -n /dev/null",
    .launcher = "command",
};
