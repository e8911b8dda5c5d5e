"""Recall@10 of a `genie search` JSON-lines output against exact neighbours (an .ivecs file of
bench/peers/knn_truth.py): `python3 cli_recall.py ANSWERS.jsonl TRUTH.ivecs [LABEL]`."""
import json
import sys

import numpy as np


def main():
    answers, truth_path = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else "CLI recall@10"
    raw = np.fromfile(truth_path, dtype=np.int32)
    k = raw[0]
    truth = raw.reshape(-1, k + 1)[:, 1:11]
    found = 0
    with open(answers) as f:
        for line, want in zip(f, truth):
            ids = [h["id"] for h in json.loads(line)["hits"]][:10]
            found += len(set(ids) & set(want.tolist()))
    print(f"  {label}: {found / truth.size:.4f}")


if __name__ == "__main__":
    main()
