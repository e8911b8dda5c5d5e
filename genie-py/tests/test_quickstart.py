"""The README's quick start (examples/python/quickstart.py) runs with only what genie-py depends
on, and leaves nothing in the folder it runs in; the README's Python example runs."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO

# Runs a script with imports limited to the standard library, genie and genie-py's dependencies
# (pyproject.toml), as in a fresh virtual environment after `pip install ./genie-py`: any other
# import fails as it would there, even where this environment has the package.
GUARD = """
import importlib.abc, runpy, sys
allowed = set(sys.argv[1].split(",")) | set(sys.stdlib_module_names) | {"genie"}
class Guard(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in allowed:
            raise ModuleNotFoundError(f"No module named {top!r} (not a dependency of genie-py)",
                                      name=top)
        return None
sys.meta_path.insert(0, Guard())
script = sys.argv[2]
sys.argv = sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""


def dependencies() -> list[str]:
    """The import names of genie-py's required dependencies (pyproject.toml's `dependencies`)."""
    text = (REPO / "genie-py/pyproject.toml").read_text()
    m = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.M | re.S)
    assert m, "pyproject.toml: no dependencies list"
    names = re.findall(r"\"\s*([A-Za-z0-9_.-]+)", m.group(1))
    assert names, "pyproject.toml: an empty dependencies list"
    return [n.lower().replace("-", "_") for n in names]


def run_guarded(script: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", GUARD, ",".join(dependencies()), script],
        capture_output=True, text=True, timeout=300, cwd=cwd,
    )


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names needs 3.10")
def test_quickstart_runs_with_genie_py_dependencies_only(tmp_path):
    res = run_guarded(str(REPO / "examples/python/quickstart.py"), tmp_path)
    assert res.returncode == 0, res.stderr
    for kind in ("keywords", "documents", "vectors"):
        assert f"{kind}: ids" in res.stdout, res.stdout
    # the index it saves goes to a temporary folder, not over the README's demo.genie
    assert not (tmp_path / "demo.genie").exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names needs 3.10")
def test_guard_refuses_other_packages(tmp_path):
    script = tmp_path / "uses_pytest.py"
    script.write_text("import genie\nimport pytest\n")
    res = run_guarded(str(script), tmp_path)
    assert res.returncode != 0
    assert "No module named 'pytest' (not a dependency of genie-py)" in res.stderr


def test_readme_python_example_runs(tmp_path, monkeypatch):
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Python") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("```\n", start)]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "demo.genie").is_file()
