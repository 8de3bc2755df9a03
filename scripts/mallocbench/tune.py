"""tune.py - `mallocbench tune` after harness/cmd/cmd_tune.c has checked its input: races
candidate allocator configurations through `mallocbench run` and confirms the winner.

Candidates: each family's default, the families' hand-picked settings (`known` in the family
data), a seeded Latin hypercube over each family's search domains (`list tunables --json`),
and after the first round neighbours of the leaders.  Each round runs the candidates still
racing in the fresh randomized blocks that bring them to their next look (one `run`, its own
CSV); a candidate leaves when its verdict against the leader is settled (the one stopping rule,
sequential.py).  Every `run` is killed at the deadline, so the budget holds to within one
sample.  The confirmation is one more `run`, sized for a verdict (run's default plan), of the
leader against the runner-up, the defaults and the hand-picked setting; the report's figures
come from it alone.

The view: its command line and the search's course, from the first check to the report.  Its
helpers, imported by it and each other alone: tunerun.py (a round's run, the stop signals),
tunesearch.py (the candidates, the racing, the journal, the confirmation's run) and
tunereport.py (the winner and tune.md).
"""
import argparse
import math
import os
import sys
import time

from . import cli
from . import mbout
from .tunereport import confirmed_winner, report_md
from .tunerun import (BadInput, Interrupted, Refused, RunFailed, catch_signals, check_input, failures, held,
                      own_files, signals_end)
from .tunesearch import Cand, Tuner, candidates, collect, ranked, space


def main():
    ap = argparse.ArgumentParser(prog="mallocbench tune")
    ap.add_argument("--families", required=True)
    ap.add_argument("--objective", default="throughput", choices=["throughput", "cpu", "rss", "pareto"])
    ap.add_argument("--budget-s", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seed-drawn", action="store_true", help="--seed was drawn by cmd_tune.c, not given: "
                    "--resume takes the journal's")
    ap.add_argument("--max-rss-bytes", type=int, default=0)
    ap.add_argument("--points", type=int, default=4)
    ap.add_argument("--domain", action="append", default=[])
    ap.add_argument("--via", default="run", help="the harness command each round runs (cmd_tune.c: run; exec "
                    "for a command after --; serve with --ready and --client)")
    ap.add_argument("--pass", dest="passthrough", action="append", default=[],
                    help="one word handed to each round's exec or serve (--metric RE, --client CMD, ...)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("-w", dest="workload")
    ap.add_argument("-m", dest="matrix")
    ap.add_argument("-o", dest="out")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    args.cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not (math.isfinite(args.budget_s) and 0 < args.budget_s <= 30 * 86400):  # as cmd_tune.c checks
        raise cli.Fail(f"--budget-s {args.budget_s:g}: not within 0..30 days", 2)
    if args.resume and args.seed_drawn and not args.out:  # as cmd_tune.c checks
        raise cli.Fail("--resume: which search? give its -o FILE.md (or its --seed N)", 2)
    args.domain = sorted(args.domain)
    args.race_key = {"pareto": "throughput"}.get(args.objective, args.objective)
    out = args.out or os.path.join("results", f"tune-{args.seed}.md")
    base = out[:-3] if out.endswith(".md") else out
    SAVED.clear()
    try:
        catch_signals()  # from here on, a stop signal ends with the line that says how to go on
        return search_and_report(args, out, base)
    except (Interrupted, KeyboardInterrupt):
        pass
    signals_end()  # a second ^C only waits for this ending
    spent = 0.0
    tuner = SAVED.get("tuner")
    if tuner is not None and tuner.saved:
        tuner.save()
        spent = tuner.elapsed()
    again = "--resume" + ("" if args.out else f" -o {out}")
    sys.stderr.write(f"{cli.prefix()}interrupted after {spent:.0f}s: continue with the same command and {again} "
                     f"({base}.tune.json)\n")
    return 130


SAVED = {}  # the search main() runs, for its ending on a signal


def search_and_report(args, out, base):
    """The search, its confirmation and its report: tune's exit status."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    resuming = args.resume and os.path.exists(base + ".tune.json")
    try:  # the report: a new file, or --force; refused before any sample runs (resumed: once the
        # journal is read, which says first when its search is finished)
        if not resuming:
            mbout.check(out, args.force)
    except mbout.OutputError as e:
        raise cli.Fail(str(e), 2) from None
    if not resuming:  # a fresh search (--resume without a journal too) replaces no file it did not write
        theirs = own_files(base)
        bad = [f for f in theirs if os.path.isdir(f) and not os.path.islink(f)]
        if theirs and not args.force or bad:
            f = (bad or theirs)[0]
            raise cli.Fail(f"cannot start a search at '{base}': '{f}' exists "
                           + ("and is a directory; remove it" if bad else
                              "(a search's file, but no journal says this search wrote it): "
                              "add --force to replace it"), 2)
    journal = base + ".tune.json"
    if os.path.islink(journal):  # the search's own journal is never read or written through a link
        if resuming or not args.force:
            raise cli.Fail(f"'{journal}' is a symbolic link: a search's journal is never "
                           f"read or written through one; remove it", 2)
        os.unlink(journal)  # --force on a fresh search: the link itself goes, never its target
    sp = space(args.families.replace(",", " ").split(), args.domain)
    tuner = SAVED["tuner"] = Tuner(args, sp, base)
    try:
        if resuming:
            tuner.load()
            tuner.check_links()
            try:
                mbout.check(out, args.force)
            except mbout.OutputError as e:
                raise BadInput(str(e)) from None
            sys.stderr.write(f"tune: resuming {base}.tune.json: {len(tuner.rounds)} rounds, "
                             f"{tuner.spent:.0f}s spent, budget {args.budget_s:.0f}s\n")
        else:
            tuner.cands = candidates(sp, args.points, tuner.rng)
            err = check_input(args, tuner.cands)
            if err:
                head = "mallocbench: "  # a line of the harness's: its own prefix, then ours
                raise cli.Fail(err[len(head):] if err.startswith(head) else err, 2)
            with held():
                for old in own_files(base):
                    os.remove(old)  # --force (refused above without it): a link itself, never its target
                tuner.save()
        tuner.ref = "glibc" if any(c.label == "glibc" for c in tuner.cands) else tuner.cands[0].label
        sys.stderr.write(f"tune: {len(tuner.cands)} candidates to start (after round 1 a neighbour of each of the "
                         f"two best joins), seed {args.seed}, budget {args.budget_s:.0f}s\n")
        deadline = time.monotonic() + args.budget_s - tuner.spent
        if tuner.confirm is None:
            leader, vals, rss, better = tuner.search(deadline)
        else:  # resumed during the confirmation: the racing is over
            (vals, better), rss, leader = tuner.gather(args.race_key), tuner.gather("rss")[0], None
        sysv = tuner.gather("sys")[0]
        finalists, want = tuner.confirm_set(vals, rss, sysv, better)
        if tuner.confirm is not None:
            byl = {c.label: c for c in tuner.cands + want}
            want = [byl.get(lab) or Cand(lab, lab, (), "default") for lab in tuner.confirm["configs"]]
        crow = tuner.run_confirm(want, deadline)
        with held():
            for key in ("rss", "sys"):  # the plots report_md may write
                tuner.claim(f"{base}.pareto-{key}.png")
            tuner.save()
    except RunFailed as e:
        if isinstance(e, Refused):
            with held():
                tuner.save()  # the time round 1 took, for a --resume with a longer budget
        raise cli.Fail(str(e), 2 if isinstance(e, BadInput) else 1) from None
    why = failures(([tuner.confirm["csv"]] if tuner.confirm else []) + [rd["csv"] for rd in tuner.rounds])
    winner, verdict = confirmed_winner(args, want, finalists, crow, better, why,
                                       tuner.confirm["csv"] if tuner.confirm else None)
    report = "\n".join(report_md(args, sp, tuner, vals, finalists, want, crow, better, winner, verdict)) + "\n"
    with held():  # the report, then the journal marked finished: an interrupt now is taken after both
        try:
            mbout.write(out, report, force=args.force or args.resume)
        except mbout.OutputError as e:
            raise cli.Fail(str(e), 2) from None
        conf = {}
        collect(crow, want, conf, args.race_key)
        first = ranked(want, conf, better, "glibc")[:1]
        tuner.save({"winner": winner.label if winner else None, "finished": True,
                    "ranked_first": first[0].label if first else None,  # by the confirmation, winner or not
                    "racing_leader": leader.label if leader else None, "verdict": verdict,
                    "winner_setting": winner.text() if winner else None, "finalists": [c.label for c in finalists]})
        said = f"winner {winner.label} ({winner.text()})" if winner else f"no winner ({verdict})"
        sys.stderr.write(f"tune: {said}; {tuner.elapsed():.1f}s of {args.budget_s:.0f}s; report {out}\n")
        signals_end()  # finished: a signal that came meanwhile has nothing left to stop
    return 0 if winner else 1


if __name__ == "__main__":
    sys.exit(cli.run(main))
