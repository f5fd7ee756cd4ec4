"""The zoo: named presets of encoder-decoder models."""

import dataclasses

from zoo.models.bahdanau import BahdanauSeq2Seq
from zoo.models.luong import LuongSeq2Seq
from zoo.models.rnnenc import RNNEncSeq2Seq


@dataclasses.dataclass(frozen=True)
class Preset:
    """A named model: its class, default sizes and the paper it follows."""

    name: str
    model_class: type
    defaults: dict
    paper: str
    description: str


_COMMON = dict(embedding_dim=256, encoder_cell="lstm", encoder_units=256, encoder_layers=1,
               decoder_cell="lstm", decoder_units=512, dropout=0.2)

PRESETS = {
    preset.name: preset
    for preset in (
        Preset("rnnenc", RNNEncSeq2Seq, dict(_COMMON, output_units=256),
               "Cho et al., EMNLP 2014 (RNNenc in Bahdanau et al., ICLR 2015)",
               "no attention: one fixed context vector conditions every step (the baseline)"),
        Preset("bahdanau", BahdanauSeq2Seq, dict(_COMMON, attention_units=256, output_units=256),
               "Bahdanau, Cho, Bengio, ICLR 2015",
               "RNNsearch: additive attention on the previous state, context into the RNN, maxout output"),
        Preset("luong_dot", LuongSeq2Seq, dict(_COMMON, attention="dot", input_feeding=True),
               "Luong, Pham, Manning, EMNLP 2015",
               "global attention, dot score on the current state, input feeding"),
        Preset("luong_general", LuongSeq2Seq, dict(_COMMON, attention="general", input_feeding=True),
               "Luong, Pham, Manning, EMNLP 2015",
               "global attention, general (multiplicative) score, input feeding"),
        Preset("luong_concat", LuongSeq2Seq, dict(_COMMON, attention="concat", attention_units=256, input_feeding=True),
               "Luong, Pham, Manning, EMNLP 2015",
               "global attention, concat score v^T tanh(W[h; s]), input feeding"),
        Preset("reduced_rank", LuongSeq2Seq, dict(_COMMON, attention="reduced_rank", attention_rank=64, input_feeding=True),
               "Luong et al. 2015 with a low-rank bilinear score",
               "Luong decoder with the reduced-rank multiplicative score (Q s)^T (R h)"),
    )
}


def presets():
    """Returns the names of the presets, in catalog order."""
    return list(PRESETS)


def get_preset(name):
    if name not in PRESETS:
        raise ValueError(f"Unknown model preset {name!r}; expected one of {presets()}.")
    return PRESETS[name]


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
    preset = get_preset(name)
    config = dict(preset.defaults)
    config.update(overrides)
    try:
        model = preset.model_class(source_vocab_size, target_vocab_size, name=name, **config)
    except (TypeError, ValueError) as error:
        raise ValueError(f"Preset {name!r} ({preset.model_class.__name__}): bad override: {error}") from None
    model.build()
    return model
