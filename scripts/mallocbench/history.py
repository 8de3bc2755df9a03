"""history.py - the nightly history's store (docs/dashboard.md): a run's CSV, .meta.json and
.rss.csv moved into HISTORY/<machine>/<NIGHT>.*, the machine the run's sidecar names
(machines.machine_id: HOST-BOOT, a boot of a host, as compare names machines; two identical VMs
storing one night are two machines).  Reading a history is nightly.py's (load, latest), which
reads folders named by the machine kind before issue 44 as well.

    history.py machine-id RUN.meta.json            print the machine's id (HOST-BOOT)
    history.py machine-kind RUN.meta.json          print its kind (the hardware fingerprint)
    history.py store RUN.csv HISTORY NIGHT [--force] move RUN.{csv,meta.json,rss.csv} into
                                                     HISTORY/<id>/NIGHT.*  (exit 2 on bad input)
    history.py latest HISTORY                        print the latest night's CSV (make dashboard)

NIGHT is a real calendar date, YYYY-MM-DD in ASCII digits (mbdata.parse_night); store refuses
one after tomorrow (UTC).
"""
import argparse
import os
import re
import sys

from . import cli
from . import machines
from . import mbcsv
from . import mbdata
from . import mbout
from . import nightly


# ---- machine id ---------------------------------------------------------------------------------

machine_id = machines.machine_id
HistoryError = nightly.HistoryError


def _meta(path):
    """The run's sidecar (the one reader); HistoryError where there is none: it names the machine."""
    meta = mbcsv.read_meta(path)
    if meta is None:
        where = path if path.endswith(".json") else mbcsv.sidecar(path, ".meta.json")
        raise HistoryError(f"cannot read '{where}': No such file or directory")
    return meta


# ---- command line ---------------------------------------------------------------------------------

def _store(args):
    src = args.run
    meta = _meta(src)
    try:
        if mbdata.night_in_future(args.night):
            raise HistoryError(f"night '{args.night}': after tomorrow (UTC); a night is the date it ran")
    except ValueError as e:
        raise HistoryError(str(e)) from None
    mbcsv.read(src)  # refuse what is not a CSV of the schema mbcsv reads before moving anything
    mid = machine_id(meta)
    dest = os.path.join(args.history, mid)
    home = os.path.realpath(args.history)
    # the id is letters, digits and '-' (machine_id); what it resolves to must still be a folder
    # of the history's own, never a link planted there that leads out of it
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", mid) or os.path.dirname(os.path.realpath(dest)) != home:
        raise HistoryError(f"machine id '{mbdata.printable(mid)}' does not name a folder inside '{args.history}'")
    os.makedirs(dest, exist_ok=True)
    if os.path.dirname(os.path.realpath(dest)) != home:
        raise HistoryError(f"'{dest}' leads out of '{args.history}' (a symbolic link?): nothing moved")
    moves = [(src, os.path.join(dest, args.night + ".csv"))]
    for suf in (".meta.json", ".rss.csv"):
        s = mbdata.sidecar(src, suf)
        if os.path.exists(s):
            moves.append((s, os.path.join(dest, args.night + suf)))
    if not args.force:
        for _, t in moves:
            if os.path.exists(t):
                raise HistoryError(f"'{t}' exists: night {args.night} is already stored (--force replaces it)")
    for s, t in moves:
        os.replace(s, t) if os.stat(s).st_dev == os.stat(dest).st_dev else _copy_move(s, t)  # mbout: a move
    print(os.path.join(dest, args.night + ".csv"))


def _copy_move(s, t):
    with open(s, "rb") as f:
        mbout.write(t, f.read(), force=True)  # a fresh temporary beside t (checked above), then a rename
    os.unlink(s)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("machine-id", help="print the machine id of a run's .meta.json")
    p.add_argument("meta")
    p = sub.add_parser("machine-kind", help="print the machine kind (hardware fingerprint) of a run's .meta.json")
    p.add_argument("meta")
    p = sub.add_parser("store", help="move a run's csv, meta.json and rss.csv into HISTORY/<id>/NIGHT.*")
    p.add_argument("run")
    p.add_argument("history")
    p.add_argument("night")
    p.add_argument("--force", action="store_true", help="replace a night already stored")
    p = sub.add_parser("latest", help="print the CSV of the latest night in HISTORY (nothing when it has none)")
    p.add_argument("history")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "machine-id":
            print(machine_id(_meta(args.meta)))
        elif args.cmd == "machine-kind":
            print(machines.machine_kind(_meta(args.meta)))
        elif args.cmd == "latest":
            path = nightly.latest(args.history)
            if path:
                print(path)
        else:
            _store(args)
    except (HistoryError, mbcsv.CsvError) as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT) from None
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
