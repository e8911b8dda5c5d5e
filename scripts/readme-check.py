#!/usr/bin/env python3
"""Runs the commands of README.md as written, so that what a new user copies works.

Fenced blocks by language:
  ```sh      each command runs with bash from the repository root (lines joined by a trailing
             backslash are one command), in a fresh virtual environment (--venv, first on PATH, so
             `pip` and `python` are its own). A command that starts the server (`... serve ...`)
             runs in the background: the checker waits until http://127.0.0.1:7700/healthz answers,
             runs the rest of the block, then stops the server with SIGINT and waits for it. A
             comment line that is JSON (`# {...}`) is the expected output of the command above it
             and is compared with what the command printed, as JSON.
  ```python  each block runs as a script with --python (an environment where genie is
             installed), in a temporary directory of its own.
  ```text, ```rust and the other languages of SKIP are not commands: reported as skipped. A block
  without a language is an error, so that every block says what it is.

Files that the commands leave in the repository root (CREATED) are removed at the end; any other
new entry there is an error. Exits non-zero with the block, the command and its output on the
first failure.

Usage: scripts/readme-check.py [--lang sh|python|all] [--python PY] [--venv DIR]
                               [--server-timeout S] [--readme FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = {"sh", "python"}
SKIP = {"text", "rust", "toml", "json", "console"}
# what the README's commands write into the repository root (git-ignored), removed afterwards
CREATED = {
    "demo.genie", "live.genie", "live.genie.live", "cli-live.genie", "cli-live.genie.live",
    "notes.genie", "notes.genie.words", "notes.genie.live",
    "emb.genie", "emb.genie.vectors", "emb.genie.codebook",
}
HEALTHZ = "http://127.0.0.1:7700/healthz"
COMMAND_TIMEOUT_S = 3600
OUTPUT_LINES = 200
README_NAME = "README.md"  # the file read, as messages name it (--readme)


@dataclass
class Block:
    lang: str
    line: int  # 1-based line of the opening fence
    section: str
    lines: list[str] = field(default_factory=list)

    def where(self) -> str:
        return f"{README_NAME}:{self.line} ```{self.lang} block (section {self.section!r})"


class Failure(Exception):
    pass


def parse_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    section = "(top)"
    current: Block | None = None
    for n, line in enumerate(text.splitlines(), 1):
        if current is not None:
            if re.fullmatch(r"\s*```\s*", line):
                blocks.append(current)
                current = None
            else:
                current.lines.append(line)
            continue
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        m = re.fullmatch(r"\s*```(\S*)\s*", line)
        if m:
            current = Block(m.group(1), n, section)
    if current is not None:
        raise Failure(f"{README_NAME}:{current.line}: a fenced block that is never closed")
    return blocks


@dataclass
class Step:
    command: str  # as bash gets it (continuation lines kept)
    line: int
    expected: list[tuple[int, str]] = field(default_factory=list)  # (line, JSON text)


def sh_steps(block: Block) -> list[Step]:
    """The block's commands, each with the expected outputs written under it."""
    steps: list[Step] = []
    pending: list[str] = []
    start = 0
    for i, line in enumerate(block.lines):
        n = block.line + 1 + i
        if pending:
            pending.append(line)
            if not line.endswith("\\"):
                steps.append(Step("\n".join(pending), start))
                pending = []
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            body = stripped[1:].strip()
            if body.startswith(("{", "[")):
                if not steps:
                    raise Failure(f"{block.where()}: line {n}: an expected output above any command")
                steps[-1].expected.append((n, body))
            continue
        if line.endswith("\\"):
            pending = [line]
            start = n
        else:
            steps.append(Step(line, n))
    if pending:
        raise Failure(f"{block.where()}: the block ends inside a continued command")
    return steps


def starts_server(command: str) -> bool:
    code = command.split(" #", 1)[0]
    return re.search(r"(^|\s)serve(\s|$)", code) is not None


def tail(text: str) -> str:
    lines = text.splitlines()
    if len(lines) > OUTPUT_LINES:
        lines = [f"... ({len(lines) - OUTPUT_LINES} lines above left out)"] + lines[-OUTPUT_LINES:]
    return "\n".join(lines)


def fail(block: Block, command: str, why: str, stdout: str = "", stderr: str = "") -> Failure:
    parts = [f"FAILED: {block.where()}", f"command:\n{command}", why]
    if stdout:
        parts.append(f"stdout:\n{tail(stdout)}")
    if stderr:
        parts.append(f"stderr:\n{tail(stderr)}")
    return Failure("\n".join(parts))


def healthz_answers() -> bool:
    try:
        with urllib.request.urlopen(HEALTHZ, timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


class Server:
    def __init__(self, block: Block, step: Step, env: dict[str, str], timeout: float):
        if healthz_answers():
            raise fail(block, step.command, f"{HEALTHZ} answers before the server starts")
        self.block, self.command = block, step.command
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            ["bash", "-c", step.command], cwd=ROOT, env=env, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        t0 = time.monotonic()
        while not healthz_answers():
            if self.proc.poll() is not None:
                raise fail(block, step.command, f"the server exited with {self.proc.returncode} "
                           "before it answered", self.output())
            if time.monotonic() - t0 > timeout:
                self.kill()
                raise fail(block, step.command, f"{HEALTHZ} did not answer within {timeout:.0f} s",
                           self.output())
            time.sleep(0.5)
        print(f"  server up after {time.monotonic() - t0:.1f} s: {step.command}", flush=True)

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stop(self, timeout: float = 60) -> None:
        """SIGINT to the server's process group (bash, cargo, genie), then a bounded wait."""
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise fail(self.block, self.command, f"the server did not stop within {timeout:.0f} s "
                       "of SIGINT", self.output())
        if code != 0:
            raise fail(self.block, self.command, f"the server exited with {code} after SIGINT",
                       self.output())
        print("  server stopped by SIGINT, exit 0", flush=True)


def run_sh(block: Block, env: dict[str, str], server_timeout: float) -> int:
    steps = sh_steps(block)
    server: Server | None = None
    try:
        for step in steps:
            if starts_server(step.command):
                if server is not None:
                    raise fail(block, step.command, "a second server in one block")
                if step.expected:
                    raise fail(block, step.command, "an expected output under a server command")
                server = Server(block, step, env, server_timeout)
                continue
            t0 = time.monotonic()
            try:
                res = subprocess.run(["bash", "-c", step.command], cwd=ROOT, env=env,
                                     capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
            except subprocess.TimeoutExpired as e:
                raise fail(block, step.command, f"timed out after {COMMAND_TIMEOUT_S} s",
                           str(e.stdout or ""), str(e.stderr or ""))
            took = time.monotonic() - t0
            if res.returncode != 0:
                raise fail(block, step.command, f"exit status {res.returncode}", res.stdout,
                           res.stderr)
            for line, expected in step.expected:
                check_output(block, step, line, expected, res.stdout, res.stderr)
            checked = f", {len(step.expected)} expected output(s) match" if step.expected else ""
            print(f"  ok ({took:.1f} s{checked}): {one_line(step.command)}", flush=True)
        if server is not None:
            s, server = server, None
            s.stop()
    finally:
        if server is not None:
            server.kill()
    return len(steps)


def check_output(block: Block, step: Step, line: int, expected: str, out: str, err: str) -> None:
    try:
        want = json.loads(expected)
    except json.JSONDecodeError as e:
        raise fail(block, step.command, f"{README_NAME}:{line}: the expected output is not JSON ({e})")
    try:
        got = json.loads(out)
    except json.JSONDecodeError as e:
        raise fail(block, step.command, f"the output is not one JSON value ({e})", out, err)
    if got != want:
        raise fail(block, step.command, f"the output differs from {README_NAME}:{line}\n"
                   f"expected: {json.dumps(want, separators=(',', ':'))}\n"
                   f"printed:  {json.dumps(got, separators=(',', ':'))}", out, err)


def run_python(block: Block, python: str) -> int:
    code = "\n".join(block.lines) + "\n"
    with tempfile.TemporaryDirectory(prefix="readme-python-") as tmp:
        script = Path(tmp) / f"readme_block_{block.line}.py"
        script.write_text(code)
        t0 = time.monotonic()
        try:
            res = subprocess.run([python, script.name], cwd=tmp, capture_output=True, text=True,
                                 timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise fail(block, code, f"timed out after {COMMAND_TIMEOUT_S} s",
                       str(e.stdout or ""), str(e.stderr or ""))
        if res.returncode != 0:
            raise fail(block, code, f"{python}: exit status {res.returncode}", res.stdout,
                       res.stderr)
        print(f"  ok ({time.monotonic() - t0:.1f} s): the block's {len(block.lines)} lines, "
              f"with {python}, in a temporary directory", flush=True)
    return 1


def one_line(command: str) -> str:
    return " ".join(command.replace("\\\n", " ").split())


def fresh_venv(path: Path) -> dict[str, str]:
    """A new virtual environment at `path` (any old one removed), first on PATH."""
    if path.exists():
        shutil.rmtree(path)
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    env = dict(os.environ)
    env.pop("PYTHONHOME", None)
    env["VIRTUAL_ENV"] = str(path)
    env["PATH"] = f"{path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    print(f"fresh virtual environment for the sh blocks: {path}", flush=True)
    return env


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lang", choices=["sh", "python", "all"], default="all",
                    help="which blocks to run (the others are reported as left for another run)")
    ap.add_argument("--python", default=sys.executable,
                    help="the Python that runs the ```python blocks (genie installed)")
    ap.add_argument("--venv", default=str(ROOT / "target/readme-venv"),
                    help="where the fresh virtual environment of the ```sh blocks is made")
    ap.add_argument("--server-timeout", type=float, default=120,
                    help="seconds to wait for the server to answer /healthz")
    ap.add_argument("--readme", default=str(ROOT / "README.md"))
    args = ap.parse_args()
    global README_NAME
    README_NAME = os.path.relpath(args.readme, ROOT)

    blocks = parse_blocks(Path(args.readme).read_text(encoding="utf-8"))
    before = set(os.listdir(ROOT))
    env: dict[str, str] | None = None
    ran, skipped = [], []
    try:
        for block in blocks:
            if block.lang not in RUN | SKIP:
                raise Failure(f"{block.where()}: unknown fence language {block.lang!r}; "
                              "use ```sh or ```python for what runs, ```text for the rest")
            if block.lang in SKIP:
                skipped.append(f"{block.where()}: not commands")
                print(f"skip {block.where()}: not commands", flush=True)
                continue
            if args.lang not in ("all", block.lang):
                skipped.append(f"{block.where()}: --lang {args.lang}")
                print(f"skip {block.where()}: --lang {args.lang}", flush=True)
                continue
            print(f"run  {block.where()}", flush=True)
            if block.lang == "sh":
                if env is None:
                    env = fresh_venv(Path(args.venv))
                n = run_sh(block, env, args.server_timeout)
            else:
                n = run_python(block, args.python)
            ran.append(f"{block.where()}: {n} command(s)" if block.lang == "sh" else block.where())
    except Failure as e:
        print(e, file=sys.stderr)
        return 1
    finally:
        for name in CREATED - before:
            p = ROOT / name
            if p.is_file():
                p.unlink()
            elif p.is_dir():
                shutil.rmtree(p)
    left = sorted(set(os.listdir(ROOT)) - before - CREATED)
    if left:
        print(f"FAILED: the README's commands left {left} in the repository root", file=sys.stderr)
        return 1
    print(f"{README_NAME}: ran {len(ran)} block(s), skipped {len(skipped)}:")
    for r in ran:
        print(f"  ran     {r}")
    for s in skipped:
        print(f"  skipped {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
