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


def test_readme_python_example_runs(tmp_path, monkeypatch):
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Python") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("```\n", start)]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "demo.genie").is_file()
