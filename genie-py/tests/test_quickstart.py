"""The README's quick start (examples/python/quickstart.py) runs."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_quickstart_runs(tmp_path):
    res = subprocess.run(
        [sys.executable, str(REPO / "examples/python/quickstart.py")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "ids" in res.stdout
