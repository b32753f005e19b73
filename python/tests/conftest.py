"""Shared set-up of the Python suite (meson suite 'python', `make test`).

DG_SOURCE_ROOT names the source tree and DG_CLI the `drivegraph` tool of
the same build (set by python/meson.build); without them the suite runs
from a checkout with the tool at build/drivegraph."""
import json
import os
import subprocess

import pytest

ROOT = os.environ.get("DG_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("DG_CLI") or os.path.join(ROOT, "build", "drivegraph")


def path(rel):
    return os.path.join(ROOT, rel)


def cli(*args, check=True):
    """Runs the drivegraph tool in the source root: CompletedProcess (text)."""
    p = subprocess.run([CLI, *args], cwd=ROOT, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"drivegraph {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


def cli_json_lines(*args):
    return [json.loads(line) for line in cli(*args).stdout.splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    # graph and scenario paths are given relative to the source root, as the
    # CLI is run there: errors and summaries name them the same way
    monkeypatch.chdir(ROOT)
