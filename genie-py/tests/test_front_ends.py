"""Every front end gives the same answers, for every kind: one index per kind, built by
`genie build` from tiny data, and the same queries searched through

- the program, locally, its JSON lines on standard output and in ``--output FILE``;
- the program as a client of `genie serve` (``--server URL --index NAME``), both outputs too;
- Python, ``genie.load(path).search`` (arrays) and ``.search_json`` (JSON lines);
- ``genie.Client(url)``: ``search`` (arrays) and ``search_json`` (the server's objects);

with the same hits in the same order (ids, and counts or distances; every field for the JSON
forms), for a k below the number of objects and one beyond it. One `genie serve` on a free
loopback port serves all the kinds for the module, and stops on SIGINT at its end."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import genie
from conftest import write_lines

KINDS = ["keywords", "sequences", "documents", "table", "vectors"]
#: how long the server may take to start listening, and to stop after SIGINT (seconds)
START_S, STOP_S = 60, 30


def _data(root: Path) -> dict:
    """Per kind: the build's input file and options, the queries file and the queries as Python
    takes them (the same queries)."""
    rng = np.random.default_rng(41)
    kinds = {}

    objects = [rng.choice(24, size=rng.integers(1, 6), replace=False) for _ in range(30)]
    objects[4] = []  # an object without keywords, which nothing finds
    queries = ["3 7 11", "0-5 20:2", "", "0-23", "17:3 4 9-10", "99"]
    kinds["keywords"] = dict(input=write_lines(root / "kw.txt", objects), options=[],
                             queries=write_lines(root / "kw.q", queries), python=queries)

    letters = np.array(list("acgt"))
    seqs = ["".join(rng.choice(letters, size=rng.integers(4, 10))) for _ in range(25)]
    queries = [seqs[3], seqs[8][:-1] + "a", "acgtacgt", "ttt"]
    kinds["sequences"] = dict(input=write_lines(root / "seq.txt", seqs),
                              options=["--ngram", 2],
                              queries=write_lines(root / "seq.q", queries), python=queries)

    docs = ["red apple pie", "green apple", "blue sky over the sea", "red sky at night",
            "an apple a day", "night sea blue", "pie in the sky", "green green grass"]
    queries = ["red apple", "sky sea", "the of", "green grass pie"]
    kinds["documents"] = dict(input=write_lines(root / "doc.txt", docs), options=[],
                              queries=write_lines(root / "doc.q", queries), python=queries)

    n = 24
    df = pd.DataFrame({
        "age": rng.integers(18, 70, size=n),
        "work": rng.choice(["Private", "State", "Self"], size=n),
        "sex": rng.choice(["Male", "Female"], size=n),
    })
    df.to_csv(root / "table.csv", index=False)
    queries = ["age=30..45 work=Private", "sex=Female", "age=..25", "work=Nobody",
               ",".join(str(v) for v in df.iloc[5])]
    kinds["table"] = dict(input=root / "table.csv", options=[],
                          queries=write_lines(root / "table.q", queries), python=queries)

    x = rng.normal(size=(120, 8)).astype(np.float32)
    xq = (x[:5] + rng.normal(scale=0.05, size=(5, 8))).astype(np.float32)
    np.save(root / "vec.npy", x)
    np.save(root / "vec.q.npy", xq)
    kinds["vectors"] = dict(input=root / "vec.npy", options=["--seed", 5],
                            queries=root / "vec.q.npy", python=xq)
    return kinds


class Server:
    """`genie serve` of every kind's index on 127.0.0.1, port 0 (the port read from its
    ``listening on`` line)."""

    def __init__(self, cli, device: str, indexes: dict) -> None:
        args = [str(cli.path), "serve", "--listen", "127.0.0.1:0", "--device", device]
        for name, path in indexes.items():
            args += ["--index", f"{name}={path}"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.stderr: list = []
        self.url = None
        listening = threading.Event()

        def read() -> None:
            for line in self.proc.stderr:
                self.stderr.append(line)
                m = re.search(r"genie: listening on (http://127\.0\.0\.1:\d+)", line)
                if m and self.url is None:
                    self.url = m.group(1)
                    listening.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + START_S
        while not listening.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"genie serve did not start listening: {''.join(self.stderr)}")

    def stop(self) -> int:
        """Stops the server as Ctrl-C does; its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_S)
                pytest.fail(f"genie serve did not stop on SIGINT within {STOP_S} s")
        self.reader.join(timeout=STOP_S)
        return self.proc.returncode


@pytest.fixture(scope="module")
def setup(cli, device, tmp_path_factory):
    """The kinds' data and indexes (built by the program), and the server of them all."""
    root = tmp_path_factory.mktemp("front-ends")
    kinds = _data(root)
    for kind, d in kinds.items():
        d["index"] = root / f"{kind}.genie"
        cli.run("build", "--quiet", "--kind", kind, "--input", d["input"], "--output",
                d["index"], *d["options"])
        d["objects"] = genie.load(d["index"]).num_objects
    server = Server(cli, device, {kind: d["index"] for kind, d in kinds.items()})
    yield kinds, server.url, root
    code = server.stop()
    assert code == 0, f"genie serve exited with {code} on SIGINT: {''.join(server.stderr)}"


# -------------------------------------------------------------------------------------------
# the answers of each front end, in two forms: the JSON objects of `genie search`'s lines, and
# the hits (id, count or distance) per query that every form carries


def _objects(lines: list, what: str) -> list:
    out = [json.loads(line) for line in lines]
    assert [o["query"] for o in out] == list(range(len(out))), f"{what}: query numbers"
    return out


def _hits_of_objects(objects: list, kind: str) -> list:
    key = {"vectors": "distance", "sequences": "distance"}.get(kind, "count")
    hits = []
    for o in objects:
        if kind == "vectors":
            hits.append([(h["id"], float(np.float32(h[key]))) for h in o["hits"]])
        else:
            hits.append([(h["id"], h[key]) for h in o["hits"]])
    return hits


def _hits_of_arrays(arrays: tuple, kind: str, width: int, what: str) -> list:
    values, ids = arrays
    assert ids.dtype == np.int64, f"{what}: ids dtype {ids.dtype}"
    assert values.shape == ids.shape and ids.shape[1] == width, (
        f"{what}: shape {ids.shape}, expected (nq, {width}) columns")
    hits = []
    for vrow, irow in zip(values, ids):
        n = int((irow >= 0).sum())
        assert (irow[:n] >= 0).all() and (irow[n:] == -1).all(), f"{what}: ids {irow}"
        if kind == "vectors":
            assert values.dtype == np.float32 and np.isinf(vrow[n:]).all(), f"{what}: {vrow}"
            hits.append([(int(i), float(v)) for i, v in zip(irow[:n], vrow[:n])])
        elif kind == "sequences":
            assert values.dtype == np.int64 and (vrow[n:] == -1).all(), f"{what}: {vrow}"
            hits.append([(int(i), int(v)) for i, v in zip(irow[:n], vrow[:n])])
        else:
            assert values.dtype == np.uint32 and (vrow[n:] == 0).all(), f"{what}: {vrow}"
            hits.append([(int(i), int(v)) for i, v in zip(irow[:n], vrow[:n])])
    return hits


def _cli_search(cli, args: list, out: Path = None) -> list:
    """The JSON lines of one `genie search`: its standard output, or the file ``out`` (then
    standard output must be empty)."""
    if out is None:
        return cli.run("search", "--quiet", *args).splitlines()
    if out.exists():
        out.unlink()
    stdout = cli.run("search", "--quiet", *args, "--output", out)
    assert stdout == "", f"genie search {args} --output: wrote to standard output too"
    assert out.is_file(), f"genie search {' '.join(map(str, args))} --output {out}: exit 0, no file"
    return out.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("beyond", [False, True], ids=["k-below", "k-beyond"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_front_end_gives_the_same_answers(setup, cli, device, kind, beyond):
    kinds, url, root = setup
    d = kinds[kind]
    n = d["objects"]
    k = n + 7 if beyond else 3
    width = min(k, n)
    local = ["--device", device, "--index", d["index"], "--queries", d["queries"], "--k", k]
    remote = ["--server", url, "--index", kind, "--queries", d["queries"], "--k", k]
    out = root / f"{kind}-{k}.out"

    # the JSON forms, each its objects, or the error that kept it from answering
    json_forms = {}
    arrays = {}

    def get(table: dict, what: str, f) -> None:
        try:
            table[what] = f()
        except AssertionError as e:
            table[what] = e

    get(json_forms, "genie search (stdout)", lambda: _cli_search(cli, local))
    get(json_forms, "genie search --output", lambda: _cli_search(cli, local, out))
    get(json_forms, "genie search --server (stdout)", lambda: _cli_search(cli, remote))
    get(json_forms, "genie search --server --output", lambda: _cli_search(cli, remote, out))
    index = genie.load(d["index"])
    assert index.kind == kind and len(index) == n
    get(json_forms, "genie.load().search_json",
        lambda: index.search_json(d["python"], k, device=device))
    client = genie.Client(url)
    get(json_forms, "genie.Client.search_json",
        lambda: [json.dumps(o) for o in client.search_json(kind, d["python"], k)])
    get(arrays, "genie.load().search", lambda: index.search(d["python"], k, device=device))
    get(arrays, "genie.Client.search", lambda: client.search(kind, d["python"], k))

    reference = "genie search (stdout)"
    assert not isinstance(json_forms[reference], AssertionError), json_forms[reference]
    want = _objects(json_forms[reference], reference)
    nq = len(d["python"])
    assert len(want) == nq
    want_hits = _hits_of_objects(want, kind)
    assert any(want_hits), "the queries find nothing: a test that could not tell answers apart"
    assert all(len(h) <= width for h in want_hits)
    if beyond:  # some query finds more than the small k (the keywords' "0-23": all it can)
        assert max(map(len, want_hits)) > 3
        assert kind != "keywords" or max(map(len, want_hits)) == n - 1

    wrong = []
    for what, got in json_forms.items():
        if isinstance(got, AssertionError):
            wrong.append(f"{what}: {got}")
            continue
        objects = _objects(got, what)
        if objects != want:
            wrong.append(f"{what}: {objects} != {want}")
    for what, got in arrays.items():
        if isinstance(got, AssertionError):
            wrong.append(f"{what}: {got}")
            continue
        try:
            hits = _hits_of_arrays(got, kind, width, what)
        except AssertionError as e:
            wrong.append(str(e))
            continue
        if hits != want_hits:
            wrong.append(f"{what}: {hits} != {want_hits}")
    assert not wrong, f"{kind}, k {k}: front ends differ from `genie search`:\n" + "\n".join(
        wrong)


def test_the_server_lists_every_index(setup):
    kinds, url, _ = setup
    listed = {i["name"]: i for i in genie.Client(url).indexes()}
    assert set(listed) == set(KINDS)
    for kind, d in kinds.items():
        assert listed[kind]["kind"] == kind and listed[kind]["objects"] == d["objects"]


def test_client_k_is_checked_and_capped_at_the_servers_objects(setup):
    kinds, url, _ = setup
    client = genie.Client(url)
    d = kinds["documents"]
    n = d["objects"]
    # beyond the server's --max-k (10,000) too: it answers at most the objects it has
    for k in (n + 1, 10**6, 10**12):
        counts, ids = client.search("documents", d["python"], k)
        assert counts.shape == ids.shape == (len(d["python"]), n)
        assert len(client.search_json("documents", d["python"], k)) == len(d["python"])
    for k in (-1, 2.5, "3"):
        with pytest.raises(ValueError, match=r"^k: expected a non-negative integer"):
            client.search("documents", d["python"], k)
        with pytest.raises(ValueError, match=r"^k: expected a non-negative integer"):
            client.search_json("documents", d["python"], k)


def test_client_names_a_nan_in_a_query_vector(setup):
    kinds, url, _ = setup
    bad = np.array(kinds["vectors"]["python"], dtype=np.float32)
    bad[3, 6] = np.nan
    with pytest.raises(ValueError, match=r"^queries\[3\]: element 6 is NaN; expected a finite"):
        genie.Client(url).search("vectors", bad, 2)
    local = genie.load(kinds["vectors"]["index"])
    with pytest.raises(ValueError, match=r"^queries\[3\]: element 6 is NaN; expected a finite"):
        local.search(bad, 2)
