"""Recipe field validation: each field's limits, checked before any data is read."""

import pytest

import recipes
from recipes.configs import base
from zoo.config_checks import RULES, config_problems, validate_config

FREE = {"dates_seed"}  # any integer seeds the dates generator


def test_every_number_and_choice_of_base_has_a_rule():
    defaults = base.get_config()
    numbers = {k for k in defaults.keys() if type(defaults[k]) in (int, float)}
    assert numbers - FREE <= set(RULES), sorted(numbers - FREE - set(RULES))
    for field in ("model", "precision", "lr_schedule", "bleu_tokenize", "source_tokenizer", "encoder_cell"):
        assert field in RULES


@pytest.mark.parametrize("name", recipes.recipe_names())
def test_every_recipe_is_valid(name):
    assert config_problems(recipes.load_config(name)) == []


@pytest.mark.parametrize(
    "field, bad, good",
    [
        ("batch_size", 0, 1), ("eval_batch_size", -1, 1), ("num_epochs", 0, 1), ("learning_rate", 0.0, 1e-5),
        ("eval_beam_width", 0, 1), ("eval_beam_width", 100000, 64), ("final_beam_width", -3, 1), ("final_beam_width", 65, 64),
        ("length_penalty", -0.1, 0.0), ("length_penalty", 10.1, 10.0),
        ("dropout", 1.0, 0.0), ("decay_rate", 0.0, 1.0), ("decay_steps", 0, 1), ("warmup_steps", -1, 0),
        ("target_bleu", 100.5, 100.0), ("early_stopping_patience", -1, 0), ("checkpoints_to_keep", 0, 1),
        ("max_train_minutes", -1.0, 0.0), ("train_steps", -5, 0), ("verbose", 3, 2), ("embedding_dim", 0, 1),
        ("encoder_layers", 0, 1), ("source_vocab_size", 4, 0), ("target_vocab_size", 2, 5),
        ("source_vocab_size", 2**31, 2**31 - 1),
        ("vocab_min_count", 0, 1), ("max_bad_fraction", 1.5, 1.0), ("max_source_length", -1, 0),
        ("lr_schedule", "cosine", "constant"), ("source_tokenizer", "bpe9", "word"), ("encoder_cell", "rnn", "gru"),
        ("precision", "float8", "auto"), ("bleu_tokenize", "words", "13a"), ("dates_languages", "en,xx", "en, fr"),
        ("clipnorm", -1.0, 0.0), ("min_learning_rate", -1e-5, 0.0), ("spm_model_type", "word", "bpe"),
        ("batch_tokens", -1, 0), ("batch_tokens", 47, 48), ("cpu_replicas", -1, 2), ("seed", -1, 0),
        ("seed", 2**32, 2**32 - 1), ("learning_rate", float("inf"), 1e-5), ("clipnorm", float("inf"), 0.0),
        ("global_clipnorm", float("inf"), 0.0), ("init_scale", float("inf"), 0.0),
        ("length_penalty", float("inf"), 0.0), ("max_train_minutes", float("inf"), 0.0),
        ("learning_rate", None, 1e-5), ("batch_size", None, 1), ("dropout", None, 0.0), ("dates_languages", None, "en"),
    ],
)  # fmt: skip
def test_each_rule_refuses_just_outside_and_accepts_its_edge(field, bad, good):
    config = recipes.load_config("dates_bahdanau")
    config[field] = bad
    with pytest.raises(ValueError) as raised:
        validate_config(config)
    message = str(raised.value)
    assert message.startswith(f"invalid config: {field}={bad!r} (expected ") and "\n" not in message, message
    config[field] = good
    validate_config(config)


@pytest.mark.parametrize("strategy, problem", [
    ("auto", None), ("mirrored", None),
    ("one_device", "cpu_replicas=2 (expected 0 with strategy='one_device': replicas of the CPU train under strategy "
                   "'mirrored' or 'auto')"),
    ("tpu", "cpu_replicas=2 (expected 0 with strategy='tpu'"),
])  # fmt: skip
def test_cpu_replicas_need_a_strategy_that_mirrors(strategy, problem):
    config = recipes.load_config("text")
    config.update(cpu_replicas=2, strategy=strategy)
    problems = config_problems(config)
    assert problems == [] if problem is None else (len(problems) == 1 and problems[0].startswith(problem)), problems


def test_all_problems_at_once_and_the_cross_field_floor():
    config = recipes.load_config("text")
    config.update(batch_size=0, model="transformer", min_learning_rate=0.5)
    assert config_problems(config) == [
        "model='transformer' (expected one of ['rnnenc', 'bahdanau', 'luong_dot', 'luong_general', "
        "'luong_concat', 'reduced_rank'])",
        "batch_size=0 (expected >= 1)",
        "min_learning_rate=0.5 (expected <= learning_rate=0.001: the schedule never goes below it)",
    ]


def test_the_model_fields_are_checked_together():
    config = recipes.load_config("dates_bahdanau")
    config.attention = "concat"  # bahdanau has its own additive score, no choice of score
    problem = ("attention='concat' does not apply to preset 'bahdanau'; expected it unset (None), or a preset that "
               "has it: ['luong_dot', 'luong_general', 'luong_concat', 'reduced_rank']")
    assert config_problems(config) == config_problems(config, model=False) == [problem]  # answered without Keras
    config.attention = "genral"  # its own rule speaks, once
    assert [p.split(" (")[0] for p in config_problems(config)] == ["attention='genral'"]
    config.update(attention=None, input_feeding=False, model="rnnenc")
    assert config_problems(config) == [problem.replace("attention='concat'", "input_feeding=False")
                                       .replace("'bahdanau'", "'rnnenc'", 1)]
    config.update(input_feeding=None, model="luong_general", decoder_layers=0)  # the model's own check, with Keras
    problems = config_problems(config)
    assert len(problems) == 1 and problems[0].startswith("model='luong_general': ") and "decoder_layers" in problems[0]
    assert config_problems(config, model=False) == []
    config = recipes.load_config("dates_luong_general")
    config.attention = "concat"
    assert config_problems(config) == []


def test_an_unknown_score_is_refused_before_keras_and_a_registered_one_is_accepted(monkeypatch):
    config = recipes.load_config("dates_luong_general")
    config.attention = "genral"
    problems = config_problems(config, model=False)
    assert problems == ["attention='genral' (expected None (the preset's) or one of ['additive', 'bahdanau', 'concat', "
                        "'dot', 'general', 'multiplicative', 'reduced_rank'])"], problems
    for name in ("multiplicative", "reduced_rank", None):
        config.attention = name
        assert config_problems(config) == []
    from zoo.layers import registry

    monkeypatch.setitem(registry._CLASSES, "scaled_general", registry._CLASSES["general"])  # as register() adds it
    config.attention = "scaled_general"
    assert config_problems(config, model=False) == []


@pytest.mark.parametrize(
    "overrides, problem",
    [
        (dict(source_vocab_size=0), "source_vocab_size=0 (expected > 260 with source_tokenizer='sentencepiece': "
                                    "the 4 reserved tokens and 256 byte pieces come first)"),
        (dict(target_vocab_size=100, spm_byte_fallback=False), None),
        (dict(target_vocab_size=4, spm_byte_fallback=False), "target_vocab_size=4 (expected 0 (no limit) or > 4"),
        (dict(shared_vocab=True, target_tokenizer="word"), "shared_vocab=True (expected source_tokenizer == "
                                                           "target_tokenizer for one vocabulary of both sides, "
                                                           "got 'sentencepiece' and 'word')"),
        (dict(shared_vocab=True, target_vocab_size=4000), "shared_vocab=True (expected source_vocab_size == "
                                                          "target_vocab_size"),
        (dict(batch_tokens=80), "batch_tokens=80 (expected 0 or >= 81, the longest row: max_source_length, "
                                "or max_target_length + 1 for </s>)"),
        (dict(batch_tokens=4000, max_target_length=0), "batch_tokens=4000 (expected 0 while max_source_length "
                                                       "or max_target_length is 0"),
    ],
)  # fmt: skip
def test_the_tokenizer_and_batch_fields_are_checked_together(overrides, problem):
    config = recipes.load_config("text")
    config.update(source_tokenizer="sentencepiece", target_tokenizer="sentencepiece", source_vocab_size=8000,
                  target_vocab_size=8000, max_source_length=80, max_target_length=80)
    config.update(overrides)
    problems = config_problems(config)
    if problem is None:
        assert problems == []
        return
    assert len(problems) == 1 and problems[0].startswith(problem), problems
    with pytest.raises(ValueError, match="^invalid config: ") as raised:
        validate_config(config)
    assert "\n" not in str(raised.value)


def test_the_choices_named_in_constants_are_the_ones_the_zoo_has():
    import zoo.models
    from zoo import constants
    from zoo.data import sentencepiece_model, tokenizer_kinds

    assert constants.PRESET_NAMES == tuple(zoo.models.presets())
    assert list(constants.ATTENTION_SCORES) == zoo.layers.names()
    assert constants.ATTENTION_ALIASES == zoo.layers.aliases()
    assert sorted(constants.TOKENIZER_TYPES) == tokenizer_kinds.tokenizer_types() == tokenizer_kinds.registered_types()
    with pytest.raises(ValueError, match="model_type"):  # the trainer refuses what the rule refuses
        sentencepiece_model._check_options(100, "word", "nfc", 1.0)
    sentencepiece_model._check_options(100, constants.SPM_MODEL_TYPES[-1], constants.SPM_NORMALIZATIONS[-1], 1.0)


def test_reading_a_recipe_and_checking_its_fields_imports_neither_tensorflow_nor_keras():
    """What zoo-train does before it imports TensorFlow, so that a typo is answered at once."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import recipes\n"
        "from zoo.config_checks import config_problems\n"
        "for name in recipes.recipe_names():\n"
        "    config = recipes.load_config(name)\n"
        "    config.update(batch_size=0, model='nosuch', encoder_cell='rnn', source_tokenizer='bpe', "
        "spm_model_type='x', stream_train='true', cpu_replicas=2, strategy='tpu', attention='nosuch')\n"
        "    problems = config_problems(config, model=False)\n"
        "    assert len(problems) >= 7 and any(p.startswith(\"attention='nosuch'\") for p in problems), problems\n"
        "    config.update(model='bahdanau', attention='dot')\n"
        "    assert any(p.startswith(\"attention='dot' does not apply\") for p in config_problems(config, model=False))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'tensorflow_text')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
