"""Every preset on `dates` at the same step budget: dev exact match and BLEU by source length.

    python benchmarks/dates_presets.py --train_steps 600 > presets.jsonl

Trains each `dates_<preset>` recipe (same data, sizes and schedule) for `--train_steps`
steps, then decodes the dev set greedily and scores short and long sources apart. The
attention presets should hold up on long inputs where `rnnenc`, which squeezes the whole
source into one vector, falls behind. Prints one JSON object per preset.
"""

import json
import os
import sys
import tempfile

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recipes import load_config  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("train_steps", 600, "training steps per preset", lower_bound=1)
flags.DEFINE_integer("long", 20, "sources of at least this many characters count as long (every source "
                     "has one, so >= 2 leaves some short)", lower_bound=2)
flags.DEFINE_list("presets", None, "presets to run (default: all)")
flags.DEFINE_string("workdir", None, "where the runs go (default: a temporary directory)")


def main(argv):
    import zoo.models
    from zoo import metrics
    from zoo.inference import KerasTranslator
    from zoo.training import train_and_evaluate
    from zoo.training.trainer import build_tokenizers, load_data

    unknown = [preset for preset in FLAGS.presets or [] if preset not in zoo.models.presets()]
    if unknown:
        raise app.UsageError(f"--presets: unknown preset(s) {unknown}; expected some of {zoo.models.presets()}")
    root = FLAGS.workdir or tempfile.mkdtemp(prefix="dates_presets_")
    for preset in FLAGS.presets or zoo.models.presets():
        config = load_config(f"dates_{preset}")
        config.update(train_steps=FLAGS.train_steps, num_epochs=1000, early_stopping_patience=0,
                      final_beam_width=1, export=False, verbose=0, num_samples=0)
        workdir = os.path.join(root, preset)
        results = train_and_evaluate(config, workdir, print_fn=lambda line: None)

        import keras

        from zoo.models.workdir import decoding_settings

        model = keras.models.load_model(os.path.join(workdir, "best.keras"), compile=False)
        dev = load_data(config)["dev"]
        source_tokenizer, target_tokenizer = build_tokenizers(config, [], os.path.join(workdir, "vocab"))
        caps = decoding_settings(config)  # as the dev evaluations and the export decode
        translator = KerasTranslator(model, source_tokenizer, target_tokenizer, caps["max_source_length"],
                                     caps.get("max_target_length"))
        hypotheses = translator.translate([s for s, _ in dev])
        by_length = {}
        for name, keep in (("short", lambda s: len(s) < FLAGS.long), ("long", lambda s: len(s) >= FLAGS.long)):
            rows = [(h, t) for h, (s, t) in zip(hypotheses, dev) if keep(s)]
            by_length[name] = dict(sentences=0, exact_match=None, bleu=None)  # an empty bucket: nothing to score
            if rows:
                scores = metrics.score([h for h, _ in rows], [t for _, t in rows], bleu_tokenize="char")
                by_length[name] = dict(sentences=len(rows), exact_match=scores.exact_match, bleu=scores.bleu)
        print(json.dumps(dict(preset=preset, train_steps=results["train_steps"], params=results["params"],
                              train_seconds=results["train_seconds"], dev_bleu=results["bleu"],
                              dev_exact_match=results["exact_match"], **by_length)), flush=True)


if __name__ == "__main__":
    app.run(main)
