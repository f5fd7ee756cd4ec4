"""SentencePiece exports: the Keras model's outputs, the op libraries (and their files) they
record, their model files in the assets, loading with TensorFlow and TensorFlow Text's kernels only, and one clear
line where TensorFlow Text is missing (zoo-translate, zoo-eval, zoo-serve)."""

import logging
import os
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf

from export_test_model import (
    REPO_ROOT,
    TEST_SOURCES,
    as_str,
    assert_export_matches_keras,
    build_sentencepiece_parts,
    run_python,
    tiny_model,
    write_export,
)
from serving.model_registry import ModelRegistry
from zoo import constants
from zoo.data import WordTokenizer
from zoo.export import ServingModule

pytestmark = pytest.mark.slow  # a model fitted and exported, and fresh TensorFlow processes

# Scripts the corpus never showed (Georgian, Cherokee, mathematical letters) and mixed ones.
UNSEEN = ["ქართული ᏣᎳᎩ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ☃", "Straße 日本語 👍🏽", "привет γράμμα", ""]
SOURCES = TEST_SOURCES + UNSEEN
INSTALL_HINT = "pip install 'tensorflow-text~="


@pytest.fixture(scope="module")
def sp_parts(export_base):
    # After the char export's model: seeding (in tiny_model) would free the SentencePiece
    # models of tokenizers built before it (see export_test_model.tiny_model).
    return build_sentencepiece_parts()


@pytest.fixture(scope="module")
def sp_export(sp_parts, tmp_path_factory):
    return write_export(str(tmp_path_factory.mktemp("sp_export")), sp_parts)


@pytest.fixture(scope="module")
def sp_loaded(sp_export):
    return tf.saved_model.load(sp_export)


def test_export_reproduces_keras_greedy_and_beam_search(sp_loaded, sp_parts):
    expected = assert_export_matches_keras(sp_loaded, sp_parts, SOURCES)
    assert len(set(expected)) >= 4, f"the test model should translate differently: {expected}"


def test_export_records_tensorflow_text_and_carries_the_models(sp_export, sp_parts, export_path):
    _, source_tokenizer, target_tokenizer = sp_parts
    settings = constants.read_export_settings(sp_export)
    assert settings[constants.OP_LIBRARIES] == ["tensorflow_text"]
    # Of TensorFlow Text's shared objects, the one that defines the SentencePiece ops.
    assert settings[constants.OP_LIBRARY_FILES] == {"tensorflow_text": ["_sentencepiece_tokenizer.so"]}
    assets = os.path.join(sp_export, "assets")
    assert sorted(os.listdir(assets)) == [
        "source_sentencepiece.model", "source_vocab.txt", "target_sentencepiece.model", "target_vocab.txt"
    ]
    for side, tokenizer in (("source", source_tokenizer), ("target", target_tokenizer)):
        with open(os.path.join(assets, f"{side}_sentencepiece.model"), "rb") as f:
            assert f.read() == tokenizer.model_proto
        with open(os.path.join(assets, f"{side}_vocab.txt"), encoding="utf-8") as f:
            assert f.read().split("\n")[:-1] == tokenizer.vocab
    # Char and word exports need TensorFlow's own ops only.
    assert constants.read_export_settings(export_path)[constants.OP_LIBRARIES] == []
    assert constants.read_export_settings(export_path)[constants.OP_LIBRARY_FILES] == {}
    assert sorted(os.listdir(os.path.join(export_path, "assets"))) == ["source_vocab.txt", "target_vocab.txt"]
    words = WordTokenizer.build(["le chat"]), WordTokenizer.build(["the cat"])
    assert ServingModule(tiny_model(*words, epochs=0, seed=None), *words).settings()[constants.OP_LIBRARIES] == []


def test_no_output_holds_a_literal_unk(sp_loaded):
    """Byte fallback: characters never seen in training become byte pieces, never `<unk>`."""
    source = tf.constant(UNSEEN)
    beam = sp_loaded.signatures["beam_search"](
        source=source, beam_width=tf.constant(3), num_hypotheses=tf.constant(3), length_penalty=tf.constant(0.6)
    )
    texts = as_str(beam["translations"]) + as_str(beam["source_tokens"])
    texts += as_str(sp_loaded.signatures["greedy"](source=source)["translation"])
    sampled = sp_loaded.signatures["sample"](
        source=source, temperature=tf.constant(2.0), top_k=tf.constant(0), seed=tf.constant(1)
    )
    texts += as_str(sampled["translation"])
    assert not [text for text in texts if "<unk>" in text]
    assert any(token.startswith("<0x") for token in as_str(beam["source_tokens"]))


def test_loads_and_answers_with_tensorflow_and_tensorflow_text_kernels_only(sp_export, sp_loaded):
    code = (
        "import glob, importlib.util, os, sys\n"
        "package = importlib.util.find_spec('tensorflow_text').submodule_search_locations[0]\n"
        "for name in ('zoo', 'keras', 'tensorflow_text'):\n"
        "    sys.modules[name] = None  # any import of them now raises ImportError\n"
        "import tensorflow as tf\n"
        "for path in glob.glob(os.path.join(package, 'python', 'ops', '*.so')):\n"
        "    tf.load_op_library(path)  # TensorFlow Text's kernels, as TF Serving links them in\n"
        "for name in ('zoo', 'keras', 'tensorflow_text'):\n"
        "    assert sys.modules.get(name) is None, name\n"
        "m = tf.saved_model.load(sys.argv[1])\n"
        "source = tf.constant(sys.argv[2:])\n"
        "print(m.signatures['serving_default'](source=source)['translation'].numpy().tolist())\n"
        "print(m.signatures['beam_search'](source=source, beam_width=tf.constant(2), num_hypotheses=tf.constant(2),\n"
        "                                  length_penalty=tf.constant(0.6))['translations'].numpy().tolist())\n"
    )
    result = run_python(code, sp_export, *SOURCES)
    assert result.returncode == 0, result.stderr[-3000:]
    default, beam = result.stdout.rstrip("\n").split("\n")
    source = tf.constant(SOURCES)
    assert default == str(sp_loaded.signatures["serving_default"](source=source)["translation"].numpy().tolist())
    expected = sp_loaded.signatures["beam_search"](
        source=source, beam_width=tf.constant(2), num_hypotheses=tf.constant(2), length_penalty=tf.constant(0.6)
    )
    assert beam == str(expected["translations"].numpy().tolist())


def test_zoo_translate_loads_the_kernels_without_importing_keras_or_tensorflow_text(sp_export, sp_loaded):
    code = (
        "import sys\n"
        "from zoo.inference import load_translate_fn\n"
        "translate, _ = load_translate_fn(sys.argv[1])\n"
        "print(translate([s.encode() for s in sys.argv[2:]]))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('keras', 'tf_keras', 'tensorflow_text')))\n"
        "print(sorted({line.rsplit('/', 1)[-1] for line in open('/proc/self/maps').read().split('\\n')\n"
        "              if '/tensorflow_text/' in line and line.endswith('.so')}))\n"
    )
    result = run_python(code, sp_export, *SOURCES[:-1])
    assert result.returncode == 0, result.stderr[-3000:]
    translations, modules, kernels = result.stdout.rstrip("\n").split("\n")[-3:]
    expected = sp_loaded.signatures["serving_default"](source=tf.constant(SOURCES[:-1]))["translation"]
    assert (translations, modules) == (str(expected.numpy().tolist()), "[]")
    # Only the kernels that zoo_export.json lists (the 21 others cost about 0.15 s to load).
    assert kernels == "['_sentencepiece_tokenizer.so']"


def test_load_op_libraries_loads_the_listed_files_or_else_all(monkeypatch):
    loaded = []
    monkeypatch.setattr(tf, "load_op_library", lambda path: loaded.append(os.path.basename(path)))
    everything = sorted(os.path.basename(path) for path in constants._kernel_paths("tensorflow_text"))
    assert "_sentencepiece_tokenizer.so" in everything and len(everything) > 1
    for files, expected in [
        ({"tensorflow_text": ["_sentencepiece_tokenizer.so"]}, ["_sentencepiece_tokenizer.so"]),
        (None, everything),  # an export written before op_library_files
        ({}, everything),
        ({"tensorflow_text": ["_no_such_kernels.so"]}, everything),  # another release's names
    ]:
        loaded.clear()
        constants.load_op_libraries(tf, ["tensorflow_text"], files)
        assert loaded == expected, files


def _without_tensorflow_text(module, *flags, stdin=b"7 mai\n"):
    """Runs `python -m module flags...` in a process where `import tensorflow_text` fails."""
    code = ("import runpy, sys\n"
            "sys.modules['tensorflow_text'] = None\n"
            f"runpy.run_module({module!r}, run_name='__main__')\n")
    return subprocess.run(
        [sys.executable, "-c", code, *flags], cwd=REPO_ROOT, input=stdin, capture_output=True, timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
    )


def test_a_missing_tensorflow_text_is_one_error_line_naming_the_package(sp_export, export_path, tmp_path):
    tsv = tmp_path / "test.tsv"
    tsv.write_text("7 mai\t2000-05-07\n", encoding="utf-8")
    for command, module, flags in (
        ("zoo-translate", "recipes.translate", [f"--model={sp_export}"]),
        ("zoo-eval", "recipes.evaluate", [f"--model={sp_export}", f"--tsv={tsv}"]),
    ):
        result = _without_tensorflow_text(module, *flags)
        stderr = result.stderr.decode()
        assert result.returncode != 0 and "Traceback" not in stderr, stderr[-3000:]
        errors = [line for line in stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and errors[0].startswith(f"{command}: error: {sp_export}: "), stderr[-3000:]
        assert "tensorflow_text" in errors[0] and INSTALL_HINT in errors[0]
    # A char export needs no TensorFlow Text.
    result = _without_tensorflow_text("recipes.translate", f"--model={export_path}")
    assert result.returncode == 0 and result.stdout.decode().count("\n") == 1, result.stderr.decode()[-3000:]


def test_zoo_serve_reports_the_version_it_cannot_load_and_serves_the_others(
    sp_export, sp_loaded, export_path, tmp_path, monkeypatch, caplog
):
    shutil.copytree(export_path, tmp_path / "1")  # char: loads without TensorFlow Text
    shutil.copytree(sp_export, tmp_path / "2")
    with monkeypatch.context() as blocked:
        blocked.setitem(sys.modules, "tensorflow_text", None)
        registry = ModelRegistry("zoo", str(tmp_path))
        assert registry.poll() is True and registry.current.version == 1
        assert registry.poll() is False and registry.current.version == 1
    failed, served = registry.statuses("zoo")
    assert (failed.version, failed.state, failed.error_code, served.state) == (2, "END", "UNKNOWN", "AVAILABLE")
    assert "tensorflow_text" in failed.error_message and INSTALL_HINT in failed.error_message
    assert "\n" not in failed.error_message
    logged = [r for r in caplog.records if "Failed to load version 2" in r.getMessage()]
    assert len(logged) == 1 and logged[0].levelno == logging.ERROR and INSTALL_HINT in logged[0].getMessage()

    registry = ModelRegistry("zoo", str(tmp_path))  # a server started with TensorFlow Text installed
    assert registry.poll() is True and registry.current.version == 2
    source = tf.constant(SOURCES)
    answer = registry.current.signatures["serving_default"].function(source=source)["translation"]
    assert as_str(answer) == as_str(sp_loaded.signatures["serving_default"](source=source)["translation"])
