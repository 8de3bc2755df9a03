"""plots.py - figures from mallocbench CSVs, as PNG and SVG, with a manifest.

Reads one or more CSVs of the harness's schema (mbcsv.SCHEMA) by column name through
mbcsv.py, which refuses malformed input in one line naming file and row, exit 2 (with their
<name>.meta.json and <name>.rss.csv sidecars when present), plots only rows with status ok, and
never draws an empty (not measured) field as 0.  Each allocator family keeps one colour in every
figure: the one its sidecar entry carries, else a fixed fallback (mbcsv.family_colours).  Writes
OUTDIR/<name>.png, .svg and OUTDIR/plots.json (name, png, svg, title, better, caption; fixed order).

    scripts/plots.py results/run.csv [MORE.csv ...] -o OUTDIR [--machine-note TEXT]

Importable: make_plots(csv_paths, outdir, machine_note=None) -> manifest list.
Needs matplotlib and numpy (Debian: /usr/bin/python3, python3-matplotlib); run
without them it says which package to install, exit 1.

The view and its driver.  Its helpers, imported by it and each other alone: plotkit.py (the
data, styles and drawing every figure shares), plotbars.py (the bar figure of each group),
plotfigs.py (the fault cliff, RSS against CPU, RSS over time, latency).
"""
import argparse
import json
import sys

from . import cli
from . import mbcsv
from . import mbout
from . import plotkit
from .plotbars import bar_names, draw_bars
from .plotfigs import draw_fault_cliff, draw_latency, draw_rss_timeline, draw_rss_vs_cpu
from .plotkit import PlotError, bar_groups, load, machine_footnote


def need():
    """Import matplotlib (its file backend, Agg: the entries only write files) and numpy, once
    (plotkit.need); ImportError (mbcsv.missing_dependency says what to install) where they are
    missing."""
    plotkit.need()


def use_file_backend():
    """Draw without a display (Agg): what the entries that only write files (plots, report)
    ask for; importing this module imports no matplotlib."""
    need()


def make_plots(csv_paths, outdir, machine_note=None, written=None, force=False, baseline=None):
    """Draw every plot the data allows into outdir (a path, or the mbout.Folder of a command
    that writes more there); return the manifest (also written to plots.json).  A path is
    refused (mbout.OutputError) when it holds files plots.py did not write, unless force.
    baseline: the configuration the captions compare against (default: the run's first).

    Raises PlotError (mbcsv.CsvError) for input it refuses (unknown schema, unreadable file, a
    malformed row).
    written, when a list, receives the path of every file written, in order.
    """
    written = [] if written is None else written
    own = not isinstance(outdir, mbout.Folder)
    if own:
        outdir = mbout.Folder(outdir, force, inputs=csv_paths)
    data = load(csv_paths)
    data.baseline = baseline
    # text.parse_math off: a label holding '$' is text, not TeX (an unbalanced one was a traceback)
    plotkit.plt.rcParams.update({"svg.hashsalt": "mallocbench", "font.size": 10, "axes.titlesize": 10,
                                 "path.simplify": True, "text.parse_math": False})
    footnote = machine_footnote(data, machine_note)
    manifest = []
    if data.rows:
        groups = bar_groups(data)
        names = bar_names(data, groups)
        for g in groups:
            manifest.append(draw_bars(data, g, names[g], outdir, footnote, written))
        for draw in (draw_fault_cliff, draw_rss_vs_cpu, draw_rss_timeline, draw_latency):
            entry = draw(data, outdir, footnote, written)
            if entry:
                manifest.append(entry)
    path = outdir.write("plots.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    written.append(path)
    if own:
        outdir.commit()
    return manifest


def main(argv=None):
    try:
        schema = f"schema {mbcsv.SCHEMA}"  # the harness's, never a number written here
    except mbcsv.CsvError:  # no schema found: reading a CSV says so, in one line
        schema = "the harness's schema"
    ap = argparse.ArgumentParser(description=f"Plot mallocbench CSVs ({schema}) as PNG and SVG with a manifest.")
    ap.add_argument("csv", nargs="+", help="mallocbench run CSV(s); <name>.meta.json and <name>.rss.csv "
                                           "beside them are read when present")
    ap.add_argument("-o", "--outdir", required=True, help="directory for the PNG/SVG files and plots.json")
    ap.add_argument("--machine-note", help="footnote text naming the machine (default: from the .meta.json)")
    ap.add_argument("--force", action="store_true",
                    help="write into a folder holding files plots.py did not write (they are kept)")
    args = ap.parse_args(argv)
    written = []
    try:
        manifest = make_plots(args.csv, args.outdir, args.machine_note, written, args.force)
    except ImportError as e:  # found missing once the input was read (need())
        raise cli.Fail(mbcsv.missing_dependency(e), 1) from None
    except (PlotError, mbout.OutputError) as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT) from None
    except OSError as e:
        raise cli.Fail(f"cannot write '{e.filename or args.outdir}': {e.strerror}", 1) from None
    for p in written:
        print(p)
    if not manifest:
        cli.warn("no rows with status ok: nothing to plot")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
