"""zoo-translate's sampling on a workdir without an export stops where its export's `sample` does."""

import tensorflow as tf

from export_test_model import BEAM_WIDTH, MAX_SOURCE_LENGTH, TEST_SOURCES, as_str, write_workdir
from zoo.export.writer import export_workdir
from zoo.inference import load_translate_fn


def test_a_workdir_samples_within_the_length_cap_of_its_config(parts, tmp_path):
    """A config whose targets were cut to 3 tokens caps every search at 4 (end token included):
    the export's `sample` does, and the workdir's sampling did not (2 * S + 10 tokens)."""
    model, source_tokenizer, target_tokenizer = parts
    config = {"max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH, "length_penalty": 0.6,
              "max_target_length": 3}
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer, config)
    sampling = {"temperature": 0.5, "top_k": 0, "seed": 5}
    translate, _ = load_translate_fn(workdir, sampling=sampling)
    samples = as_str(translate([s.encode() for s in TEST_SOURCES]))
    loaded = tf.saved_model.load(export_workdir(workdir, export_dir=str(tmp_path / "export")))
    expected = loaded.signatures["sample"](
        source=tf.constant(TEST_SOURCES), temperature=tf.constant(0.5), top_k=tf.constant(0), seed=tf.constant(5)
    )["translation"]
    assert samples == as_str(expected)
    assert max(len(sample) for sample in samples) <= 4, samples
