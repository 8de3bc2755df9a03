/* cmd_compare.c - `mallocbench compare`: hands its arguments to the Python
 * module mallocbench.compare (the statistics read only CSV), under an
 * interpreter that has what it needs, with MB_HARNESS set for the schema. */
#include "cli.h"
#include "tools.h"

/* The statistics live in mallocbench.compare (it reads only CSV). */
int cmd_compare(int argc, char **argv)
{
    return tools_exec_python("compare", argc - 1, argv + 1);
}
