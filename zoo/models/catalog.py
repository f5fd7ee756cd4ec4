"""The zoo: named presets of encoder-decoder models."""

import dataclasses
import inspect
import numbers

from zoo import model_defaults as defaults
from zoo.models.bahdanau import BahdanauSeq2Seq
from zoo.models.luong import LuongSeq2Seq
from zoo.models.rnnenc import RNNEncSeq2Seq
from zoo.models.seq2seq import Seq2Seq


@dataclasses.dataclass(frozen=True)
class Preset:
    """A named model: its class, its constructor arguments and the paper it follows.

    `defaults` holds every constructor argument of `model_class` (sizes from
    `zoo.model_defaults`) with the preset's own choices applied, e.g. `attention="dot"`.
    """

    name: str
    model_class: type
    defaults: dict
    paper: str
    description: str


def constructor_defaults(model_class):
    """`{argument: default}` of a `Seq2Seq` subclass's constructor and its bases'."""
    found = {}
    for cls in reversed(model_class.__mro__):
        if issubclass(cls, Seq2Seq):
            for parameter in inspect.signature(cls.__init__).parameters.values():
                if parameter.default is not parameter.empty:
                    found[parameter.name] = parameter.default
    return found


def _preset(name, model_class, choices, paper, description):
    return Preset(name, model_class, dict(constructor_defaults(model_class), **choices), paper, description)


_LUONG = "Luong, Pham, Manning, EMNLP 2015"

PRESETS = {
    preset.name: preset
    for preset in (
        _preset("rnnenc", RNNEncSeq2Seq, {}, "Cho et al., EMNLP 2014 (RNNenc in Bahdanau et al., ICLR 2015)",
                "no attention: one fixed context vector conditions every step (the baseline)"),
        _preset("bahdanau", BahdanauSeq2Seq, {}, "Bahdanau, Cho, Bengio, ICLR 2015",
                "RNNsearch: additive attention on the previous state, context into the RNN, maxout output"),
        _preset("luong_dot", LuongSeq2Seq, dict(attention="dot"), _LUONG,
                "global attention, dot score on the current state, input feeding"),
        _preset("luong_general", LuongSeq2Seq, dict(attention="general"), _LUONG,
                "global attention, general (multiplicative) score, input feeding"),
        _preset("luong_concat", LuongSeq2Seq, dict(attention="concat"), _LUONG,
                "global attention, concat score v^T tanh(W[h; s]), input feeding"),
        _preset("reduced_rank", LuongSeq2Seq, dict(attention="reduced_rank"),
                "Luong et al. 2015 with a low-rank bilinear score",
                "Luong decoder with the reduced-rank multiplicative score (Q s)^T (R h)"),
    )
}  # fmt: skip
_CHOICES = {name: set(defaults.CHOICE_FIELDS) & set(p.defaults) for name, p in PRESETS.items()}
if [name for name, taken in _CHOICES.items() if taken == set(defaults.CHOICE_FIELDS)] != list(defaults.CHOICE_PRESETS) \
        or not all(taken in (set(), set(defaults.CHOICE_FIELDS)) for taken in _CHOICES.values()):  # pragma: no cover
    raise ImportError("zoo.model_defaults.CHOICE_PRESETS must name the presets that take every field of CHOICE_FIELDS "
                      "(and the others none)")


def presets():
    """Returns the names of the presets, in catalog order."""
    return list(PRESETS)


def get_preset(name):
    if name not in PRESETS:
        raise ValueError(f"Unknown model preset {name!r}; expected one of {presets()}.")
    return PRESETS[name]


def recipe_overrides(name, fields):
    """The constructor arguments that a recipe's fields give the preset `name`.

    Args:
        name: a name from `presets()`.
        fields: a mapping with the recipe's model fields (`defaults.SIZE_FIELDS`,
            `defaults.CHOICE_FIELDS`, "dropout"); missing ones are left to the preset.

    Returns:
        `{argument: value}` for `build(name, ..., **overrides)`: the sizes the preset
        takes (a size it has no use for, e.g. `output_units` for `luong_*`, is left
        out) and the choices that are not None.

    Raises:
        ValueError: a choice (attention, decoder_layers, input_feeding) set for a
            preset without it; the message names the field and the presets that take it.
    """
    preset = get_preset(name)
    overrides = {}
    for field in defaults.SIZE_FIELDS + ("dropout",):
        if field in fields and field in preset.defaults:
            overrides[field] = fields[field]
    choices = {field: fields[field] for field in defaults.CHOICE_FIELDS if field in fields}
    problems = defaults.choice_problems(name, choices)
    if problems:
        raise ValueError(problems[0])
    overrides.update((field, value) for field, value in choices.items() if value is not None)
    return overrides


_SIZES = ("embedding_dim", "encoder_units", "decoder_units", "attention_units", "output_units", "attention_rank",
          "encoder_layers", "decoder_layers")


def _check_common(name, overrides):
    """The sizes and the dropout rate, named as the caller gave them (the layers would name their own
    arguments: `units`, `rate`)."""
    for key in _SIZES:
        value = overrides.get(key)
        if key in overrides and value is not None and (
                not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1):
            raise ValueError(f"Preset {name!r}: bad override: {key} must be an int >= 1, received {value!r}")
    if "dropout" in overrides:
        rate = overrides["dropout"]
        if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0.0 <= rate < 1.0:
            raise ValueError(f"Preset {name!r}: bad override: dropout must be a number in [0, 1), received {rate!r}")


def _construct(name, source_vocab_size, target_vocab_size, overrides):
    preset = get_preset(name)
    _check_common(name, overrides)
    config = dict(preset.defaults)
    config.update(overrides)
    try:
        return preset.model_class(source_vocab_size, target_vocab_size, name=name, **config)
    except (TypeError, ValueError) as error:
        raise ValueError(f"Preset {name!r} ({preset.model_class.__name__}): bad override: {error}") from None


def check(name, **overrides):
    """Raises the ValueError that `build(name, ..., **overrides)` would raise for bad overrides, building nothing.

    Sizes that only the weights reveal (the dot score's `Dq == Dv`) are checked by `build`.
    """
    _construct(name, 8, 8, overrides)


def build(name, source_vocab_size, target_vocab_size, **overrides):
    """Builds the preset `name` with every weight created.

    Args:
        name: a name from `presets()`.
        source_vocab_size, target_vocab_size: vocabulary sizes (reserved ids included).
        **overrides: any constructor argument of the preset's class, e.g.
            `decoder_units=128`.

    Returns:
        A built `Seq2Seq` Keras model.
    """
    model = _construct(name, source_vocab_size, target_vocab_size, overrides)
    try:
        model.build()
    except ValueError as error:  # sizes that only the weights reveal, e.g. the dot score's Dq == Dv
        sizes = ", ".join(f"{key}={value!r}" for key, value in overrides.items()) or "its defaults"
        raise ValueError(f"Preset {name!r} with {sizes}: {error}") from None
    return model
