"""The values each recipe field accepts, checked before any data is read or any step is run.

`validate_config(config)` raises one `ValueError` naming every bad field, its value and what
it accepts: "invalid config: batch_size=0 (expected >= 1); learning_rate=-0.1 (expected > 0)".
Fields not listed in `RULES` (the dates generator's seed, file names, fields a user's recipe
adds) take any value of their type; the data fields are checked when the data is read.

Standard library only, with the choices in `zoo.constants`, so that `zoo-train` answers a bad
field in a fraction of a second, before TensorFlow loads; only the check of the model sizes
together (`model=True`, the default) imports Keras, for it builds the preset's layers. The checks
of several fields together are in `zoo.config_combinations`.
"""

import importlib
import math
import sys

from zoo.constants import (
    ATTENTION_ALIASES,
    ATTENTION_SCORES,
    BEAM_STOPPING,
    DEFAULT_MAX_BEAM_WIDTH,
    ENCODER_IMPLEMENTATIONS,
    FIRST_REGULAR_ID,
    INT32_MAX,
    MAX_LENGTH_PENALTY,
    PRECISIONS,
    PRESET_NAMES,
    RNN_CELLS,
    SPM_MODEL_TYPES,
    SPM_NORMALIZATIONS,
    STRATEGIES,
    SWITCH_VALUES,
)
from zoo.config_combinations import COMBINATIONS, preset_choices


class Rule:
    """A check on one field's value and the words that say what it accepts.

    Args:
      check: `value -> bool`, or raising `ValueError` whose message says what is wrong.
      expected: the words, or a function returning them (for choices known only later).
    """

    def __init__(self, check, expected):
        self.check = check
        self._expected = expected

    @property
    def expected(self):
        return self._expected() if callable(self._expected) else self._expected


def _words(relation, low):
    return f"a finite number {relation} {low}" if isinstance(low, float) else f"{relation} {low}"


def at_least(low):
    return Rule(lambda value: value >= low and math.isfinite(value), _words(">=", low))


def above(low):
    return Rule(lambda value: value > low and math.isfinite(value), _words(">", low))


def between(low, high, high_included=True):
    if high_included:
        return Rule(lambda value: low <= value <= high, f"between {low} and {high}")
    return Rule(lambda value: low <= value < high, f">= {low} and < {high}")


def one_of(choices, then=None):
    """`choices`: a tuple, or a function returning one (so that its imports wait until needed); `then`: None, or a
    further check of a value among them, raising a ValueError that says why it cannot work here."""

    def names():
        return tuple(choices() if callable(choices) else choices)

    return Rule(lambda value: value in names() and (then is None or then(value)), lambda: f"one of {list(names())}")


def _attribute(module, name):
    """A function returning `module.name`, imported at the first call (the choices of a field, known only later)."""
    return lambda: getattr(importlib.import_module(module), name)


def _check_model(config):
    import zoo.models

    zoo.models.check(config.model, **zoo.models.recipe_overrides(config.model, config))


def _attention():
    """`attention`: None (the preset's score) or a built-in score name, or one that a recipe file registered with
    `zoo.layers.register` (then the registry is loaded; without it, Keras is not imported to ask)."""
    def names():
        registry = sys.modules.get("zoo.layers.registry")
        extra = set(registry.names()) | set(registry.aliases()) if registry else set()
        return sorted(set(ATTENTION_SCORES) | set(ATTENTION_ALIASES) | extra)

    return Rule(lambda value: value is None or value in names(), lambda: f"None (the preset's) or one of {names()}")


def _tokenizers():
    from zoo.data.tokenizer_kinds import registered_types

    return registered_types()


def _bleu_loads(name):  # the dev set is scored after the first epoch: a tokenizer that cannot load fails now
    from zoo import metrics

    return metrics.check_bleu_tokenize(name) is None


def _date_languages():
    from zoo.data.dates import date_languages

    return date_languages()


def _switch():
    return Rule(lambda value: str(value).lower() in SWITCH_VALUES, "'auto', 'true' or 'false'")


def _vocab_size():
    return Rule(lambda value: value == 0 or FIRST_REGULAR_ID < value <= INT32_MAX,
                f"0 (no limit) or > {FIRST_REGULAR_ID} (the reserved tokens) and <= {INT32_MAX} (int32 ids)")


def _languages():
    return Rule(lambda value: bool(value.strip()) and all(
        language.strip() in _date_languages() for language in value.split(",") if language.strip()
    ), lambda: f"comma-separated languages out of {list(_date_languages())}")


POSITIVE, COUNT, SWITCH = at_least(1), at_least(0), _switch()
EXPORTABLE_BEAM = Rule(lambda value: 1 <= value <= DEFAULT_MAX_BEAM_WIDTH,
                       f"between 1 and {DEFAULT_MAX_BEAM_WIDTH}, the export's largest beam")
RULES = {
    # data and tokenizers
    "dates_train_size": POSITIVE, "dates_dev_size": POSITIVE, "dates_languages": _languages(),
    "max_bad_fraction": between(0.0, 1.0), "tfds_max_train_pairs": COUNT,
    "source_tokenizer": one_of(_tokenizers), "target_tokenizer": one_of(_tokenizers),
    "source_vocab_size": _vocab_size(), "target_vocab_size": _vocab_size(),
    "vocab_min_count": POSITIVE, "max_source_length": COUNT, "max_target_length": COUNT,
    "spm_model_type": one_of(SPM_MODEL_TYPES), "spm_normalization": one_of(SPM_NORMALIZATIONS),
    "stream_train": SWITCH, "stream_sample_size": POSITIVE, "shuffle_buffer_size": COUNT,
    # model
    "model": one_of(PRESET_NAMES), "embedding_dim": POSITIVE, "encoder_units": POSITIVE,
    "encoder_layers": POSITIVE, "decoder_units": POSITIVE, "attention_units": POSITIVE,
    "attention_rank": POSITIVE, "output_units": POSITIVE, "encoder_cell": one_of(RNN_CELLS), "attention": _attention(),
    "encoder_implementation": one_of(ENCODER_IMPLEMENTATIONS),
    "decoder_cell": one_of(RNN_CELLS), "dropout": between(0.0, 1.0, high_included=False),
    "precision": one_of(PRECISIONS),
    # where it trains (docs/scaling.md)
    "strategy": one_of(STRATEGIES), "steps_per_execution": COUNT,
    "cpu_replicas": COUNT,
    "jit_compile": SWITCH, "static_shapes": SWITCH,
    # optimization
    "batch_size": POSITIVE, "batch_tokens": COUNT, "num_epochs": POSITIVE, "steps_per_epoch": COUNT, "train_steps": COUNT,
    "max_train_minutes": at_least(0.0), "learning_rate": above(0.0),
    "lr_schedule": one_of(("constant", "inverse_sqrt", "exponential", "plateau")), "warmup_steps": COUNT,
    "decay_steps": POSITIVE, "decay_rate": Rule(lambda value: 0.0 < value <= 1.0, "> 0 and <= 1"),
    "min_learning_rate": at_least(0.0), "clipnorm": at_least(0.0), "global_clipnorm": at_least(0.0),
    "loss_normalization": one_of(("tokens", "sentences")), "label_smoothing": between(0.0, 1.0, high_included=False),
    "init_scale": at_least(0.0), "sampled_vocabulary": COUNT,
    # evaluation, early stopping, checkpoints
    "bleu_tokenize": one_of(_attribute("zoo.metrics", "BLEU_TOKENIZERS"), then=_bleu_loads),
    # final_beam_width is also serving_default's beam, which the export bounds; the dev evaluations that choose
    # the best model score it as an export can decode
    "eval_beam_width": EXPORTABLE_BEAM, "final_beam_width": EXPORTABLE_BEAM,
    "length_penalty": between(0.0, MAX_LENGTH_PENALTY), "beam_stopping": one_of(BEAM_STOPPING),
    "eval_batch_size": POSITIVE, "max_eval_sentences": COUNT,
    "early_stopping_patience": COUNT, "early_stopping_min_delta": at_least(0.0),
    "target_bleu": between(0.0, 100.0), "checkpoint_every_steps": COUNT, "checkpoints_to_keep": POSITIVE,
    "num_samples": COUNT, "verbose": one_of((0, 1, 2)),
    "seed": between(0, 2**32 - 1),  # keras.utils.set_random_seed's range (numpy's)
    # export
    "shortlist_k": COUNT, "shortlist_frequent": COUNT,
}  # fmt: skip


def config_problems(config, model=True):
    """`["field=value (expected ...)", ...]` for every field of `config` that `RULES` refuses.

    `model=False` leaves out the check of the model fields together, the one that needs Keras (it builds
    the preset's layers): the rest imports neither TensorFlow nor Keras, so a command can run it first.
    """
    problems = []
    for field, rule in RULES.items():
        if field not in config:
            continue
        try:
            if not rule.check(config[field]):
                problems.append(f"{field}={config[field]!r} (expected {rule.expected})")
        except (TypeError, AttributeError):  # None from a recipe file, a list where a number goes, ...
            problems.append(f"{field}={config[field]!r} (expected {rule.expected})")
        except ValueError as error:
            problems.append(f"{field}={config[field]!r}: {error}")
    problems.extend(preset_choices(config, set(config.keys()) - _fields_of(problems)))  # a choice the preset lacks
    if model and "model" in config and not problems:  # a field-level problem would only resurface in the model's words
        try:  # the model fields together: sizes that do not fit each other
            _check_model(config)
        except ValueError as error:
            problems.append(f"model={config.model!r}: {error}")
    reported = _fields_of(problems)  # a field's own rule speaks first
    fields = set(config.keys()) - reported  # the checks of several fields read only the valid ones
    for check in COMBINATIONS:
        problems.extend(p for p in check(config, fields) if p.split("=")[0] not in reported)
    return problems


def _fields_of(problems):
    return {problem.split("=")[0] for problem in problems}


def validate_config(config, model=True):
    """Raises `ValueError` naming every field whose value cannot work; see `RULES` and `config_problems`."""
    problems = config_problems(config, model)
    if problems:
        raise ValueError("invalid config: " + "; ".join(problems))
