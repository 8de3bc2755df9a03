/* huge.h - a configuration's huge-page condition, -t LABEL:huge=VALUE, a name
 * no family uses (docs/thp.md): `never` switches transparent huge pages off
 * for the whole process tree (spawn.h's thp_disable: PR_SET_THP_DISABLE,
 * proven per process by judge.c), `advise` turns the family's own huge-page
 * setting on (alloc_info_t.huge_advise), `system` leaves the kernel's mode.
 * Every check is made before anything runs; the harness never writes /sys. */
#ifndef MB_HUGE_H
#define MB_HUGE_H
#include "types.h"

#include <stdbool.h>
#include <stddef.h>

#define HUGE_NAME "huge"

/* One value of -t FAMILY:huge=V for family a ("default" is system): 0 with
 * *h, or 2 after a one-line error (an unknown value; advise for a family
 * without a setting, or on a kernel that gives no huge pages). */
int huge_parse(const alloc_info_t *a, const char *value, run_huge_t *h);
/* The same check, silent: 0, or -1 with why (one line, no program name). */
int huge_value(const alloc_info_t *a, const char *value, run_huge_t *h, char *why, size_t len);

/* Is name one of the family's huge-page tunables (huge_off's, huge_advise's)? */
bool huge_tunable(const alloc_info_t *a, const char *name);

/* The condition applied to configuration c, whose own settings are set:
 * advise adds the family's setting (unless -t gave it); a setting that
 * contradicts the condition, or a hugetlbfs one while no pages are reserved,
 * is refused.  given: huge= was given (the label then shows it).  0, or 2
 * after the error. */
int huge_apply(run_config_t *c, run_huge_t h, bool given);

#endif
