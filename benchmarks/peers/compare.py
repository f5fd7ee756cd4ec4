"""The zoo and OpenNMT-py side by side: one table (JSON) and both learning curves on one chart.

    python benchmarks/peers/compare.py --peer benchmarks/results/peer_opennmt_py_debian_fr_en_20min.json \
        --zoo benchmarks/results/quality_debian_fr_en_20min.json --row tied_embeddings --row baseline \
        --out benchmarks/results/side_by_side_debian_fr_en_20min.json

`--peer` is the JSON of `benchmarks/peers/opennmt_py.py`, `--zoo` that of
`benchmarks/quality.py`; `--row` picks the zoo's row (repeatable: several zoo rows may be
compared with the peer). Dev BLEU on the chart is greedy on the first 500 dev sentences for
both toolkits, as each one's benchmark scores it.
"""

import json
import os
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

FLAGS = flags.FLAGS
flags.DEFINE_string("peer", None, "JSON of benchmarks/peers/opennmt_py.py")
flags.DEFINE_string("zoo", None, "JSON of benchmarks/quality.py")
flags.DEFINE_multi_string("row", ["baseline"], "the zoo's row(s) to compare")
flags.DEFINE_string("out", "side_by_side.json", "the table, as JSON")
flags.DEFINE_string("png", None, "the learning curves (default: --out with .png)")
flags.mark_flags_as_required(["peer", "zoo"])


def _read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def peer_line(peer):
    return {"toolkit": peer["toolkit"], "steps": peer["steps"], "train_tokens_per_second": peer["train_tokens_per_second"],
            "dev_beam5": peer["dev_beam5"]["bleu"], "dev_greedy": peer["dev_greedy"]["bleu"],
            "test_beam5": peer["test_beam5"]["bleu"], "test_greedy": peer["test_greedy"]["bleu"],
            "dev_curve": [tuple(point) for point in peer.get("dev_curve", [])]}


def zoo_line(row):
    if "test" not in row:
        raise app.UsageError(f"zoo row {row['row']!r} has no test scores (run quality.py without --notest)")
    return {"toolkit": f"zoo ({row['row']})", "steps": row["steps"],
            "train_tokens_per_second": row["train_tokens_per_second"],
            "dev_beam5": row["dev"]["beam5"]["bleu"], "dev_greedy": row["dev"]["beam1"]["bleu"],
            "test_beam5": row["test"]["beam5"]["bleu"], "test_greedy": row["test"]["beam1"]["bleu"],
            "dev_curve": [(step, bleu) for step, bleu, _ in row["dev_curve"]]}


def main(argv):
    del argv
    from zoo import plot

    zoo_rows = {row["row"]: row for row in _read(FLAGS.zoo)["rows"]}
    missing = [name for name in FLAGS.row if name not in zoo_rows]
    if missing:
        raise app.UsageError(f"--row {missing}: not in {FLAGS.zoo} (rows: {sorted(zoo_rows)})")
    lines = [peer_line(_read(FLAGS.peer))] + [zoo_line(zoo_rows[name]) for name in FLAGS.row]
    with open(FLAGS.out, "w", encoding="utf-8") as f:
        json.dump({"peer": os.path.abspath(FLAGS.peer), "zoo": os.path.abspath(FLAGS.zoo), "lines": lines}, f,
                  indent=1)
    figure = plot.learning_curves_figure({line["toolkit"]: line["dev_curve"] for line in lines if line["dev_curve"]},
                                         title="dev BLEU (greedy, 500 sentences) against training steps")
    plot.save_figure(figure, FLAGS.png or os.path.splitext(FLAGS.out)[0] + ".png")
    for line in lines:
        print(json.dumps({key: value for key, value in line.items() if key != "dev_curve"}))


if __name__ == "__main__":
    app.run(main)
