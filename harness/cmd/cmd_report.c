/* cmd_report.c - `mallocbench report RUN.csv`: hands its arguments to the
 * Python module mallocbench.report (it reads only CSV and its sidecars), as
 * `compare` does, with MB_HARNESS set for the schema. */
#include "cli.h"
#include "tools.h"

int cmd_report(int argc, char **argv)
{
    return tools_exec_python("report", argc - 1, argv + 1);
}
