"""zoo.export: the SavedModel reproduces the Keras model's decoding and loads with TensorFlow alone."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import tensorflow as tf

from export_test_model import (
    BEAM_WIDTH,
    LENGTH_PENALTY,
    MAX_SOURCE_LENGTH,
    TEST_SOURCES,
    as_str,
    assert_export_matches_keras,
    run_python,
    write_workdir,
)
from zoo.export import (
    SIGNATURES,
    ServingModule,
    existing_versions,
    export_saved_model,
    export_workdir,
    read_warmup_requests,
)
from zoo.export import warmup, writer
from zoo.export.signatures import serving_signature
from zoo.export.warmup import decode_prediction_log, encode_prediction_log
from zoo.inference.evaluation import evaluate_model
from zoo.models.workdir import load_workdir, source_cap


def test_layout_assets_and_settings(export_path, parts):
    _, source_tokenizer, target_tokenizer = parts
    assert sorted(os.listdir(export_path)) == [
        "assets", "assets.extra", "fingerprint.pb", "saved_model.pb", "variables"
    ]
    for name, tokenizer in (("source_vocab.txt", source_tokenizer), ("target_vocab.txt", target_tokenizer)):
        with open(os.path.join(export_path, "assets", name), encoding="utf-8") as f:
            assert f.read().split("\n")[:-1] == tokenizer.vocab
    with open(os.path.join(export_path, "assets.extra", "zoo_export.json"), encoding="utf-8") as f:
        settings = json.load(f)
    assert settings["beam_width"] == BEAM_WIDTH
    assert settings["max_source_length"] == MAX_SOURCE_LENGTH
    assert settings["length_penalty"] == pytest.approx(LENGTH_PENALTY)


def test_signatures_have_the_contract_names_dtypes_and_shapes(loaded):
    expected = {
        "serving_default": ({"source": (tf.string, [None])}, {"translation": tf.string, "score": tf.float32}),
        "greedy": ({"source": (tf.string, [None])}, {"translation": tf.string, "score": tf.float32}),
        "beam_search": (
            {
                "source": (tf.string, [None]),
                "beam_width": (tf.int32, None),  # unknown rank: a scalar or (B,)
                "num_hypotheses": (tf.int32, None),
                "length_penalty": (tf.float32, None),
            },
            {
                "translations": tf.string,
                "scores": tf.float32,
                "log_probs": tf.float32,
                "attention": tf.float32,
                "source_tokens": tf.string,
                "target_tokens": tf.string,
            },
        ),
        "score": (
            {"source": (tf.string, [None]), "target": (tf.string, [None])},
            {"log_prob": tf.float32},
        ),
        "sample": (
            {
                "source": (tf.string, [None]),
                "temperature": (tf.float32, None),
                "top_k": (tf.int32, None),
                "seed": (tf.int32, None),
            },
            {"translation": tf.string, "log_prob": tf.float32},
        ),
    }
    assert sorted(loaded.signatures) == sorted(expected)
    for name, (inputs, outputs) in expected.items():
        function = loaded.signatures[name]
        _, input_specs = function.structured_input_signature
        shapes = {k: (v.dtype, None if v.shape.rank is None else v.shape.as_list()) for k, v in input_specs.items()}
        assert shapes == inputs, name
        assert {k: v.dtype for k, v in function.structured_outputs.items()} == outputs, name


def test_warmup_requests_parse_back_with_tf_serving_protos(export_path, loaded):
    path = os.path.join(export_path, "assets.extra", "tf_serving_warmup_requests")
    requests = read_warmup_requests(path)
    assert [name for name, _ in requests] == [
        "serving_default", "serving_default", "greedy", "beam_search", "score", "sample", "sample"
    ]
    assert requests[3][1]["beam_width"] == BEAM_WIDTH
    assert as_str(requests[0][1]["source"]) == TEST_SOURCES[:2]
    # The official protos read our hand-encoded records the same way.
    from tensorflow_serving.apis import prediction_log_pb2  # the test extra installs it
    for record, (name, inputs) in zip(tf.data.TFRecordDataset(path), requests):
        log = prediction_log_pb2.PredictionLog.FromString(record.numpy())
        request = log.predict_log.request
        assert request.model_spec.signature_name == name
        assert sorted(request.inputs) == sorted(inputs)
        for key, value in inputs.items():
            np.testing.assert_array_equal(tf.make_ndarray(request.inputs[key]), value)
    # And every warmup request runs on the export.
    for name, inputs in requests:
        loaded.signatures[name](**{k: tf.constant(v) for k, v in inputs.items()})


def test_prediction_log_encoding_round_trip_with_model_name():
    record = encode_prediction_log("beam_search", {"source": ["é", ""], "beam_width": np.int32(7)}, "zoo")
    name, inputs = decode_prediction_log(record)
    assert name == "beam_search"
    assert as_str(inputs["source"]) == ["é", ""]
    assert inputs["beam_width"] == 7 and inputs["beam_width"].dtype == np.int32
    from tensorflow_serving.apis import prediction_log_pb2  # the test extra installs it
    assert prediction_log_pb2.PredictionLog.FromString(record).predict_log.request.model_spec.name == "zoo"


def test_export_reproduces_keras_beam_search_and_greedy(loaded, parts):
    expected = assert_export_matches_keras(loaded, parts, TEST_SOURCES)
    assert len(set(expected)) >= 4, f"the test model should translate differently: {expected}"


def test_beam_search_tokens_and_attention_line_up(loaded, parts):
    _, source_tokenizer, _ = parts
    beam = loaded.signatures["beam_search"](
        source=tf.constant(TEST_SOURCES),
        beam_width=tf.constant(3),
        num_hypotheses=tf.constant(1),
        length_penalty=tf.constant(0.6),
    )
    source_tokens = beam["source_tokens"].numpy()
    target_tokens = beam["target_tokens"].numpy()
    attention = beam["attention"].numpy()
    assert attention.shape == (len(TEST_SOURCES), target_tokens.shape[1], source_tokens.shape[1])
    expected_source = source_tokenizer.tokenize(tf.constant(TEST_SOURCES)).to_list()
    for i, sentence in enumerate(TEST_SOURCES):
        real_source = [t for t in source_tokens[i].tolist() if t]
        assert real_source == expected_source[i]
        real_target = [t for t in target_tokens[i].tolist() if t]
        ended = real_target[-1] == b"</s>"
        assert ended or len(real_target) == 2 * len(real_source) + 10  # else cut at the length limit
        translation = beam["translations"].numpy()[i, 0]
        words = real_target[:-1] if ended else real_target
        assert b"".join(words).replace("▁".encode(), b" ").strip() == translation
        rows = attention[i, : len(real_target), : len(real_source)]
        np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-5)
        assert np.all(attention[i, len(real_target) :] == 0) and np.all(attention[i, :, len(real_source) :] == 0)


def test_score_equals_beam_log_probs(loaded):
    beam = loaded.signatures["beam_search"](
        source=tf.constant(TEST_SOURCES),
        beam_width=tf.constant(4),
        num_hypotheses=tf.constant(2),
        length_penalty=tf.constant(0.6),
    )
    sources = np.repeat(np.array(TEST_SOURCES, dtype=object), 2)
    targets = beam["translations"].numpy().reshape(-1)
    scored = loaded.signatures["score"](source=tf.constant(sources), target=tf.constant(targets))["log_prob"]
    np.testing.assert_allclose(scored.numpy(), beam["log_probs"].numpy().reshape(-1), rtol=1e-4, atol=1e-4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many targets as sources"):
        loaded.signatures["score"](source=tf.constant(["a", "b"]), target=tf.constant(["a"]))


def test_a_sentence_translates_the_same_alone_and_in_any_batch(loaded):
    batch = loaded.signatures["serving_default"](source=tf.constant(TEST_SOURCES))
    reordered = loaded.signatures["serving_default"](source=tf.constant(TEST_SOURCES[::-1]))
    assert as_str(reordered["translation"]) == as_str(batch["translation"])[::-1]
    for i, sentence in enumerate(TEST_SOURCES):
        alone = loaded.signatures["serving_default"](source=tf.constant([sentence]))
        assert as_str(alone["translation"]) == as_str(batch["translation"][i : i + 1])
        np.testing.assert_allclose(alone["score"].numpy(), batch["score"].numpy()[i : i + 1], rtol=1e-5, atol=1e-5)


def test_beam_width_and_num_hypotheses_are_clamped(loaded):
    def run(beam_width, num_hypotheses, length_penalty=0.6):
        return loaded.signatures["beam_search"](
            source=tf.constant(TEST_SOURCES[:2]),
            beam_width=tf.constant(beam_width),
            num_hypotheses=tf.constant(num_hypotheses),
            length_penalty=tf.constant(length_penalty, tf.float32),
        )

    assert run(0, 0)["translations"].shape == (2, 1)  # beam 1, one hypothesis
    assert run(2, 5)["translations"].shape == (2, 2)  # no more hypotheses than beams
    assert run(10_000, 70)["translations"].shape == (2, 64)  # beam clamped to max_beam_width
    default = run(3, 1, 0.6)
    nan_penalty = run(3, 1, float("nan"))  # falls back to the export's length penalty
    assert as_str(nan_penalty["translations"]) == as_str(default["translations"])


def test_loads_and_answers_without_zoo_keras_or_tensorflow_text(export_path, loaded):
    code = (
        "import sys\n"
        "for name in ('zoo', 'keras', 'tensorflow_text'):\n"
        "    sys.modules[name] = None  # any import of them now raises ImportError\n"
        "import tensorflow as tf\n"
        "for name in ('zoo', 'keras', 'tensorflow_text'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "    except ImportError:\n"
        "        pass\n"
        "    else:\n"
        "        raise SystemExit(name + ' is importable')\n"
        "m = tf.saved_model.load(sys.argv[1])\n"
        "out = m.signatures['serving_default'](source=tf.constant(sys.argv[2:]))\n"
        "print('\\t'.join(t.decode() for t in out['translation'].numpy()))\n"
        "out = m.signatures['sample'](source=tf.constant(sys.argv[2:]), temperature=tf.constant(1.5),\n"
        "                             top_k=tf.constant([0, 3, 0, 2, 0, 1][:len(sys.argv) - 2]), seed=tf.constant(7))\n"
        "print('\\t'.join(t.decode() for t in out['translation'].numpy()))\n"
        "print('\\t'.join(repr(float(p)) for p in out['log_prob'].numpy()))\n"
    )
    sources = TEST_SOURCES[:6]
    result = run_python(code, export_path, *sources)
    assert result.returncode == 0, result.stderr[-3000:]
    default, sampled, log_probs = result.stdout.rstrip("\n").split("\n")
    expected = loaded.signatures["serving_default"](source=tf.constant(sources))["translation"]
    assert default.split("\t") == as_str(expected)
    expected = loaded.signatures["sample"](
        source=tf.constant(sources),
        temperature=tf.constant(1.5),
        top_k=tf.constant([0, 3, 0, 2, 0, 1][: len(sources)]),
        seed=tf.constant(7),
    )
    assert sampled.split("\t") == as_str(expected["translation"])
    np.testing.assert_allclose([float(p) for p in log_probs.split("\t")], expected["log_prob"].numpy(), rtol=1e-6)


# saved_model_cli evaluates --input_exprs as Python literals only (no numpy calls).
SESSION_RUNS = {
    "serving_default": ("source=[b'3 mars 2021', b'']", ["translation", "score"]),
    "greedy": ("source=[b'7 mai']", ["translation", "score"]),
    "beam_search": (
        "source=[b'3 mars 2021', b'7 mai'];beam_width=3;num_hypotheses=2;length_penalty=0.6",
        ["translations", "scores", "log_probs", "attention", "source_tokens", "target_tokens"],
    ),
    "score": ("source=[b'7 mai'];target=[b'2000-05-07']", ["log_prob"]),
    "sample": ("source=[b'3 mars 2021', b'7 mai'];temperature=1.0;top_k=[0, 2];seed=[5, 6]", ["translation", "log_prob"]),
}


def test_saved_model_cli_run_answers_beam_search(export_path):
    """`saved_model_cli run`: TF Serving's session-based loader, from the command line."""
    command = shutil.which("saved_model_cli")
    command = [command] if command else [sys.executable, "-m", "tensorflow.python.tools.saved_model_cli"]
    exprs, keys = SESSION_RUNS["beam_search"]
    result = subprocess.run(
        command + ["run", "--dir", export_path, "--tag_set", "serve", "--signature_def", "beam_search",
                   "--input_exprs", exprs],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for key in keys:
        assert f"Result for output key {key}:" in result.stdout, result.stdout[-2000:]


@pytest.mark.parametrize("signature", sorted(SESSION_RUNS))
def test_session_loader_answers_every_signature_like_the_tf2_loader(export_path, loaded, signature, tmp_path):
    """The function `saved_model_cli run` calls (a TF1 Session, as in TF Serving), in this process."""
    from tensorflow.python.tools import saved_model_cli
    exprs, keys = SESSION_RUNS[signature]
    inputs = saved_model_cli.load_inputs_from_input_arg_string("", exprs, "")
    saved_model_cli.run_saved_model_with_feed_dict(export_path, "serve", signature, inputs, str(tmp_path), True)
    expected = loaded.signatures[signature](**{k: tf.constant(v) for k, v in inputs.items()})
    assert sorted(keys) == sorted(expected)
    for key in keys:
        got = np.load(tmp_path / f"{key}.npy", allow_pickle=True)
        if got.dtype == object:
            assert got.tolist() == expected[key].numpy().tolist(), key
        else:
            np.testing.assert_allclose(got, expected[key].numpy(), rtol=1e-5, atol=1e-6, err_msg=key)


def test_versions_increment_and_an_interrupted_export_leaves_nothing(parts, tmp_path, monkeypatch):
    model, source_tokenizer, target_tokenizer = parts
    base = str(tmp_path / "base")
    os.makedirs(os.path.join(base, "7"))  # not a SavedModel: ignored when numbering
    os.makedirs(os.path.join(base, "2"))
    open(os.path.join(base, "2", "saved_model.pb"), "wb").close()
    assert existing_versions(base) == [2]

    def interrupted(module, path, signatures=None):
        os.makedirs(os.path.join(path, "variables"))
        open(os.path.join(path, "saved_model.pb"), "wb").close()
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.tf.saved_model, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_saved_model(model, source_tokenizer, target_tokenizer, base, max_source_length=8)
    assert sorted(os.listdir(base)) == ["2", "7"]
    monkeypatch.undo()

    with pytest.raises(FileExistsError, match="exists"):
        export_saved_model(model, source_tokenizer, target_tokenizer, base, version=7)
    path = export_saved_model(model, source_tokenizer, target_tokenizer, base, max_source_length=8)
    assert path == os.path.join(base, "3")
    assert sorted(os.listdir(base)) == ["2", "3", "7"]


def test_serving_module_rejects_a_tokenizer_that_does_not_fit_the_model(parts):
    model, source_tokenizer, target_tokenizer = parts
    with pytest.raises(ValueError, match="target tokenizer has .* tokens but the model expects"):
        ServingModule(model, source_tokenizer, source_tokenizer)
    with pytest.raises(ValueError, match="beam_width must be"):
        ServingModule(model, source_tokenizer, target_tokenizer, beam_width=0)


def test_load_workdir_and_export_workdir(parts, tmp_path, loaded):
    model, source_tokenizer, target_tokenizer = parts
    config = {"model": {"name": "bahdanau"}, "max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH,
              "length_penalty": LENGTH_PENALTY, "bleu_tokenize": "char"}
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer, config)
    restored, source_back, target_back, config_back = load_workdir(workdir)
    assert source_back.vocab == source_tokenizer.vocab and target_back.vocab == target_tokenizer.vocab
    assert config_back.model.name == "bahdanau"
    for a, b in zip(restored.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)

    path = export_workdir(workdir)
    assert path == os.path.join(workdir, "export", "1")
    with open(os.path.join(path, "assets.extra", "zoo_export.json"), encoding="utf-8") as f:
        settings = json.load(f)
    assert (settings["beam_width"], settings["max_source_length"]) == (BEAM_WIDTH, source_cap(config_back))
    again = tf.saved_model.load(path).signatures["serving_default"](source=tf.constant(TEST_SOURCES))
    expected = loaded.signatures["serving_default"](source=tf.constant(TEST_SOURCES))
    assert as_str(again["translation"]) == as_str(expected["translation"])

    # The export records the training's sacreBLEU tokenizer, and zoo-eval scores with it when the export
    # is moved away from its workdir's config.json (it fell back to 13a there).
    assert settings["bleu_tokenize"] == "char"
    moved = str(tmp_path / "moved")
    shutil.copytree(path, os.path.join(moved, "1"))
    tsv = tmp_path / "test.tsv"
    tsv.write_text(f"{TEST_SOURCES[0]}\t{as_str(expected['translation'])[0]}\n", encoding="utf-8")
    for model_path in (moved, workdir):
        scores = evaluate_model(model_path, str(tsv))
        assert "tok:char" in scores["bleu_signature"] and scores["exact_match"] == 1.0, model_path

    with pytest.raises(FileNotFoundError, match="best.keras"):
        load_workdir(str(tmp_path))


def test_a_damaged_best_keras_is_named_as_damaged_not_missing(parts, tmp_path):
    model, source_tokenizer, target_tokenizer = parts
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer, {})
    best = os.path.join(workdir, "best.keras")
    with zipfile.ZipFile(best) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    with open(best, "rb") as f:
        whole = f.read()
    with open(best, "wb") as f:  # cut short, as a copy or a disk that filled up leaves it
        f.write(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=r"best\.keras: not a \.keras archive \(truncated or corrupt\)"):
        load_workdir(workdir)
    with zipfile.ZipFile(best, "w") as archive:  # a whole archive around cut weights
        for info, data in members:
            archive.writestr(info, data[:100] if info.filename.endswith(".h5") else data)
    with pytest.raises(ValueError, match=r"best\.keras: a damaged \.keras archive"):
        load_workdir(workdir)


def test_max_source_length_truncates_inside_the_graph(parts, tmp_path):
    path = export_saved_model(*parts, str(tmp_path), max_source_length=6)
    loaded = tf.saved_model.load(path)
    long_text = "le 4 avril 1999"
    beam = loaded.signatures["beam_search"](
        source=tf.constant([long_text]), beam_width=tf.constant(2), num_hypotheses=tf.constant(1),
        length_penalty=tf.constant(0.6),
    )
    assert as_str(beam["source_tokens"]) == ["l", "e", "▁", "4", "▁", "a"]
    cut = loaded.signatures["serving_default"](source=tf.constant([long_text, "le 4 a"]))
    assert as_str(cut["translation"])[0] == as_str(cut["translation"])[1]  # the first 6 characters
    np.testing.assert_allclose(cut["score"][0], cut["score"][1], rtol=1e-5)


def test_every_signature_of_the_table_is_exported_and_warmed_up(export_path, loaded):
    """The signature table is the one list: the SavedModel's signatures and its warmup requests follow it."""
    assert sorted(loaded.signatures) == sorted(SIGNATURES)
    for name, spec in SIGNATURES.items():
        assert list(getattr(ServingModule, spec.method).input_signature) == list(spec.inputs), name
    requests = read_warmup_requests(os.path.join(export_path, "assets.extra", "tf_serving_warmup_requests"))
    assert sorted({name for name, _ in requests}) == sorted(SIGNATURES)
    for name, inputs in requests:
        assert sorted(inputs) == sorted(SIGNATURES[name].input_names), name
    with open(os.path.join(export_path, "assets.extra", "zoo_export.json"), encoding="utf-8") as f:
        assert json.load(f)["signatures"] == list(SIGNATURES)


def test_warmup_inputs_that_do_not_fit_their_signature_are_refused(monkeypatch):
    defaults = {"beam_width": 3, "length_penalty": 0.6}
    assert len(warmup.warmup_requests(["a b", "c"], defaults)) == 7
    beam = SIGNATURES["beam_search"]

    def refit(**fields):
        return dataclasses.replace(beam, **fields)

    cases = [
        (refit(warmup=lambda sources, defaults: []), "expected at least one warmup request"),
        (refit(warmup=lambda sources, defaults: [{"source": sources}]), r"do not match its inputs"),
        (refit(warmup=lambda sources, defaults: [{"source": sources, "beam_width": 3.0, "num_hypotheses": np.int32(1),
                                                  "length_penalty": np.float32(0.6)}]),
         r"'beam_width' is float64 \(\), expected int32 <unknown>"),
        (refit(warmup=lambda sources, defaults: [{"source": [sources], "beam_width": np.int32([3, 3]),
                                                  "num_hypotheses": np.int32(1), "length_penalty": np.float32(0.6)}]),
         r"'source' is string \(1, 2\), expected string \(None,\)"),
    ]
    for spec, message in cases:
        monkeypatch.setitem(SIGNATURES, "beam_search", spec)
        with pytest.raises(ValueError, match=message):
            warmup.warmup_requests(["a b", "c"], defaults)


def test_a_method_is_tied_only_to_a_signature_of_the_table():
    with pytest.raises(ValueError, match=r"'nucleus' is not in SIGNATURES; expected one of \['serving_default'"):
        serving_signature("nucleus")

    def translate(self, source):
        return {"translation": source}

    with pytest.raises(ValueError, match="'greedy' is computed by 'greedy', not 'translate'"):
        serving_signature("greedy")(translate)


@pytest.mark.parametrize("penalties, words", [
    ({"length_penalty": float("nan")}, "length_penalty must not be NaN"),
    ({"length_penalty": float("inf")}, "length_penalty must be finite"),
    ({"coverage_penalty": -1.0}, "coverage_penalty must be >= 0"),
])
def test_the_export_api_checks_its_penalties_before_tracing(penalties, words):
    from zoo.export.serving_module import ServingModule

    with pytest.raises(ValueError, match=words) as raised:
        ServingModule(None, None, None, **penalties)
    assert "in user code" not in str(raised.value)  # not an autograph trace of the signature


def test_the_default_version_goes_past_incomplete_numeric_directories(tmp_path):
    from zoo.export.writer import next_version

    assert next_version(str(tmp_path / "none")) == 1
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "saved_model.pb").write_bytes(b"")
    (tmp_path / "2").mkdir()  # an incomplete version: not served, but its name is taken
    (tmp_path / "5").mkdir()  # further up: the numbering does not jump past it
    (tmp_path / ".3.123.tmp").mkdir()  # an export being written elsewhere: not a version
    assert next_version(str(tmp_path)) == 3
