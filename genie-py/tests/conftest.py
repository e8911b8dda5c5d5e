"""Fixtures of the genie test suite: the `genie` program to compare with, the device to search
on, and small data.

- The program: ``GENIE_CLI``, else ``target/debug/genie`` or ``target/release/genie`` of this
  repository (``CARGO_TARGET_DIR`` respected); a suite that cannot find it fails, it does not
  skip.
- The device: ``GENIE_TEST_DEVICE`` (``cpu`` by default; ``gpu`` on a machine with a GPU runs
  every search of the suite, the package's and the program's, on the GPU).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Dict, Iterable, Optional

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _find_cli() -> Path:
    given = os.environ.get("GENIE_CLI")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    found = [target / p / "genie" for p in ("debug", "release")]
    found = [p for p in found if p.is_file()]
    if not found:
        pytest.fail(
            "the genie program is needed to compare with: build it (cargo build) or set "
            "GENIE_CLI",
            pytrace=False,
        )
    return max(found, key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="session")
def device() -> str:
    """The device every search of the suite runs on."""
    return os.environ.get("GENIE_TEST_DEVICE", "cpu")


class Cli:
    """Runs the `genie` program."""

    def __init__(self, path: Path, device: str) -> None:
        self.path = path
        self.device = device

    def run(self, *args: object) -> str:
        """The program's standard output; a failure is an assertion error with its stderr."""
        env = dict(os.environ, RUST_LOG="warn")
        res = subprocess.run(
            [str(self.path), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert res.returncode == 0, f"genie {args}: {res.stderr}"
        return res.stdout

    def fails(self, *args: object) -> str:
        """The program's error message (it must fail)."""
        res = subprocess.run(
            [str(self.path), *map(str, args)], capture_output=True, text=True, timeout=300
        )
        assert res.returncode != 0, f"genie {args} succeeded"
        return res.stderr

    def search(self, index: Path, queries: Path, k: int, *extra: object) -> list:
        """The JSON lines of `genie search` on the suite's device."""
        out = self.run(
            "search", "--quiet", "--device", self.device, "--index", index,
            "--queries", queries, "--k", k, *extra,
        )
        return out.splitlines()


@pytest.fixture(scope="session")
def cli(device: str) -> Cli:
    """The `genie` program of this repository."""
    return Cli(_find_cli(), device)


@pytest.fixture(scope="session")
def keyword_data():
    """Random keyword objects and queries (a fixed seed): lists of int arrays."""
    rng = np.random.default_rng(7)
    objects = [rng.choice(200, size=rng.integers(0, 12), replace=False) for _ in range(500)]
    queries = [rng.choice(200, size=rng.integers(1, 8), replace=False) for _ in range(60)]
    return objects, queries


def write_lines(path: Path, rows) -> Path:
    """One line per row (a row of ints is joined by spaces)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(r if isinstance(r, str) else " ".join(str(int(x)) for x in r))
            f.write("\n")
    return path


@contextlib.contextmanager
def serving(cli: Cli, *args: object):
    """`genie serve ARGS` on 127.0.0.1, port 0, until the block ends: yields its URL (fails when
    it does not listen within two minutes; stopped with SIGTERM, killed after 30 s more)."""
    proc = subprocess.Popen(
        [str(cli.path), "serve", *map(str, args), "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE, text=True,
    )
    found = {}

    def read():
        for line in proc.stderr:
            m = re.search(r"listening on (http://\S+)", line)
            if m and "url" not in found:
                found["url"] = m.group(1)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while "url" not in found and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert "url" in found, "genie serve did not start listening"
        yield found["url"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def brute(
    objects: Dict[int, Iterable[int]],
    queries,
    k: int,
    allow: Optional[Iterable[int]] = None,
    deny: Iterable[int] = (),
):
    """The ``(counts, ids)`` a keyword search of ``objects`` (id: keywords) should give, by
    brute force: per query the hits of count > 0 among the objects ``allow`` (``None``: all) and
    not ``deny`` lets through, by count descending, then id ascending; ``k`` columns, capped at
    the number of objects, as a search gives them."""
    allow = None if allow is None else set(allow)
    deny = set(deny)
    width = min(k, len(objects))
    counts = np.zeros((len(queries), width), dtype=np.uint32)
    ids = np.full((len(queries), width), -1, dtype=np.int64)
    sets = {i: {int(x) for x in kw} for i, kw in objects.items()}
    for r, q in enumerate(queries):
        qs = {int(x) for x in q}
        hits = [
            (len(qs & kw), i)
            for i, kw in sets.items()
            if (allow is None or i in allow) and i not in deny
        ]
        hits = sorted((h for h in hits if h[0] > 0), key=lambda h: (-h[0], h[1]))[:width]
        for j, (c, i) in enumerate(hits):
            counts[r, j] = c
            ids[r, j] = i
    return counts, ids


def same(got, want) -> None:
    """``got`` (a search's ``(counts, ids)``) is ``want``, dtypes included."""
    assert got[0].dtype == np.uint32 and got[1].dtype == np.int64
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
