#!/usr/bin/env python3
"""Copies the MSL's regression references into the suite: for each model
directory tests/data/msl/<Model>/ with a compare.json, writes
tests/data/msl/<Model>/reference.csv with the time column and the columns
compare.json compares, taken as text (not reformatted) from
<msl-dir>/<Model>/reference.csv, and copies <msl-dir>/<Model>/signals.txt
(the signals the MSL's regression lists for the model). <msl-dir> holds
the MSL 4.0.0 reference results (Modelica Association; docs/msl.md).

  scripts/msl_reference.py <msl-dir> <source-root> [MODEL...]
"""
import csv
import json
import os
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, root, only = sys.argv[1], sys.argv[2], sys.argv[3:]
    base = os.path.join(root, "tests", "data", "msl")
    for name in sorted(os.listdir(base)):
        cmp_path = os.path.join(base, name, "compare.json")
        if not os.path.isfile(cmp_path) or (only and name not in only):
            continue
        with open(cmp_path) as f:
            wanted = sorted(json.load(f)["signals"])
        with open(os.path.join(src, name, "reference.csv"), newline="") as f:
            rows = list(csv.reader(f))
        header = rows[0]
        missing = [s for s in wanted if s not in header]
        if missing:
            sys.exit("%s: not in the reference: %s" % (name, ", ".join(missing)))
        idx = [header.index("time")] + [header.index(s) for s in wanted]
        out = os.path.join(base, name, "reference.csv")
        with open(out, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            for r in rows:
                if r:
                    w.writerow([r[i] for i in idx])
        with open(os.path.join(src, name, "signals.txt")) as f:
            listed = f.read()
        with open(os.path.join(base, name, "signals.txt"), "w") as f:
            f.write(listed)
        print("%s: %d rows, %d signals" % (out, len(rows) - 1, len(wanted)))


if __name__ == "__main__":
    main()
