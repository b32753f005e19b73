#!/usr/bin/env python3
"""The figures README.md and docs/ quote, regenerated from the tool.

  scripts/figures.py <drivegraph> <source-root> [--write]

scripts/figures.json names each figure once: the drivegraph command that
makes it (run from the source root, its --json output read at a JSON
pointer, scaled by "scale" if given, and formatted, or its text output cut
from one line to another).
A document quotes a figure between markers:

  inline   <!--fig:NAME-->6.60<!--/fig-->
  block    <!--fig:NAME-->            (a line of its own, right before a
           ```                         fenced block: the block's text is
           ...                         the figure)
           ```

Without --write the script checks every marker against a fresh run and
exits 1 naming each figure that differs (the test suite runs it so); with
--write it rewrites the documents. Unknown names and unclosed markers are
errors either way.
"""
import json
import os
import re
import subprocess
import sys

DOCS = ["README.md"] + ["docs/" + f for f in ("cli.md", "graphs.md", "shifts.md", "python.md",
                                               "energy.md", "msl.md", "performance.md")]
INLINE = re.compile(r"<!--fig:([a-z0-9_]+)-->(.*?)<!--/fig-->")
BLOCK = re.compile(r"^<!--fig:([a-z0-9_]+)-->$")


def pointer(doc, ptr):
    for part in ptr.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


class Runner:
    def __init__(self, exe, root):
        self.exe, self.root, self.cache = exe, root, {}

    def output(self, args):
        key = tuple(args)
        if key not in self.cache:
            r = subprocess.run([self.exe] + list(args), cwd=self.root, capture_output=True,
                               text=True)
            if r.returncode != 0:
                sys.exit("figures: drivegraph %s failed (%d): %s"
                         % (" ".join(args), r.returncode, r.stderr.strip()))
            self.cache[key] = r.stdout
        return self.cache[key]

    def figure(self, name, spec):
        out = self.output(spec["run"])
        if "json" in spec:
            value = pointer(json.loads(out), spec["json"])
            if value is None:
                sys.exit("figures: %s: %s is null" % (name, spec["json"]))
            return spec.get("format", "{}").format(value * spec.get("scale", 1))
        lines = out.splitlines()
        start = next(i for i, l in enumerate(lines) if re.search(spec["from"], l))
        end = next(i for i in range(start, len(lines)) if re.search(spec["to"], lines[i]))
        return "\n".join(spec.get("head", []) + lines[start:end + 1])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    exe, root = os.path.abspath(args[0]), args[1]
    write = "--write" in sys.argv[1:]
    with open(os.path.join(root, "scripts", "figures.json")) as f:
        specs = json.load(f)
    run = Runner(exe, root)
    stale, used = [], set()
    for rel in DOCS:
        path = os.path.join(root, rel)
        with open(path) as f:
            lines = f.read().split("\n")
        out, i = [], 0
        while i < len(lines):
            line = lines[i]
            m = BLOCK.match(line)
            if m:
                name = m.group(1)
                if name not in specs:
                    sys.exit("figures: %s:%d: unknown figure %s" % (rel, i + 1, name))
                if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
                    sys.exit("figures: %s:%d: a block figure must precede a fenced block"
                             % (rel, i + 1))
                close = next((k for k in range(i + 2, len(lines)) if lines[k] == "```"), None)
                if close is None:
                    sys.exit("figures: %s:%d: unclosed fenced block" % (rel, i + 2))
                want = run.figure(name, specs[name])
                have = "\n".join(lines[i + 2:close])
                used.add(name)
                if have != want:
                    stale.append((rel, i + 1, name, have, want))
                out += [line, lines[i + 1]] + want.split("\n") + ["```"]
                i = close + 1
                continue

            def sub(m, rel=rel, lineno=i + 1):
                name = m.group(1)
                if name not in specs:
                    sys.exit("figures: %s:%d: unknown figure %s" % (rel, lineno, name))
                want = run.figure(name, specs[name])
                used.add(name)
                if m.group(2) != want:
                    stale.append((rel, lineno, name, m.group(2), want))
                return "<!--fig:%s-->%s<!--/fig-->" % (name, want)

            if "<!--fig:" in line and not INLINE.search(line):
                sys.exit("figures: %s:%d: unclosed figure marker" % (rel, i + 1))
            out.append(INLINE.sub(sub, line))
            i += 1
        if write:
            with open(path, "w") as f:
                f.write("\n".join(out))
    unused = sorted(set(specs) - used)
    for rel, lineno, name, have, want in stale:
        print("%s:%d: figure %s is %r, the tool gives %r" % (rel, lineno, name, have, want))
    if unused:
        print("figures named in scripts/figures.json and quoted nowhere: " + ", ".join(unused))
    if write:
        print("%d figures, %d rewritten" % (len(used), len(stale)))
        return 0
    print("%d figures checked, %d differ%s" % (len(used), len(stale),
                                             "" if not stale else
                                             " (regenerate: scripts/figures.py %s %s --write)"
                                             % (args[0], root)))
    return 1 if stale or unused else 0


if __name__ == "__main__":
    sys.exit(main())
