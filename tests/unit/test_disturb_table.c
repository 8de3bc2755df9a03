/* test_disturb_table.c - disturb_scan's table of threads (harness/sample/disturb.c):
 * once it is full, threads that have ended leave it with their last readings
 * kept in the sums, so a long compile's later processes are still read; a
 * full table of live threads takes no more. */
#include "disturb.h"
#include "../check.h"

#include <unistd.h>

int main(void)
{
    static disturb_tasks_t d;
    /* a full table of threads that cannot exist (beyond any pid_max) */
    for (size_t i = 0; i < DISTURB_TASKS; i++) {
        d.t[i].tid = (int)(1 << 30) + (int)i;
        d.t[i].delay_ns = 1000;
        d.t[i].nivcsw = 1;
    }
    d.n = DISTURB_TASKS;
    uint64_t delay, nivcsw;
    disturb_sums(&d, &delay, &nivcsw);
    CHECK_U64(delay, 1000ULL * DISTURB_TASKS);
    disturb_scan(getpid(), &d); /* our own thread: read, in place of the ended ones */
    CHECK_INT(d.n, 1);
    CHECK_INT(d.t[0].tid, getpid());
    disturb_sums(&d, &delay, &nivcsw);
    CHECK(delay >= 1000ULL * DISTURB_TASKS);   /* the ended threads' readings kept */
    CHECK(nivcsw >= (uint64_t)DISTURB_TASKS);
    CHECK_U64(d.gone_delay_ns, 1000ULL * DISTURB_TASKS);

    /* a table full of live threads (ourselves, over and over) takes no more */
    static disturb_tasks_t live;
    for (size_t i = 0; i < DISTURB_TASKS; i++)
        live.t[i].tid = getpid();
    live.n = DISTURB_TASKS;
    disturb_scan(getpid(), &live);
    CHECK_INT(live.n, DISTURB_TASKS);
    CHECK_U64(live.gone_delay_ns, 0);
    CHECK_DONE();
}
