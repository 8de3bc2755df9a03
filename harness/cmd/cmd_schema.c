/* cmd_schema.c - `mallocbench schema [--json]`: the CSV schema (csv.h's
 * CSV_COLUMNS) as results/SCHEMA.md, or as JSON for the scripts. */
#include "cli.h"
#include "csv.h"

#include <stdio.h>
#include <string.h>

int cmd_schema(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: mallocbench schema [--json]\nprints results/SCHEMA.md: every CSV column with its unit;\n"
               "--json: the same table for the scripts (name, type, unit, meaning, schema_version)\n");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--json"))
        return die_usage("schema: unexpected argument '%s'", argv[1]);
    if (argc > 1)
        csv_print_schema_json(stdout);
    else
        csv_print_schema(stdout);
    return 0;
}
