"""The default sizes and choices of the zoo's models, each written once.

The model classes take them as constructor defaults, the catalog's presets get them from
the classes, and the recipes (`recipes/configs/base.py`) start from them, so that a preset
trained by `zoo-train` and one built with `zoo.models.build(name, ...)` have the same sizes.
Standard library only, outside `zoo.models` (whose package imports Keras), so that a recipe
can be read, and its fields checked, before TensorFlow loads; `zoo.models.defaults` names it too.
"""

import numbers

EMBEDDING_DIM = 256  # source and target embedding size
ENCODER_CELL = "lstm"  # "lstm" or "gru"
ENCODER_UNITS = 256  # units of each encoder direction
ENCODER_LAYERS = 1  # stacked bidirectional encoder layers
ENCODER_IMPLEMENTATION = "zoo"  # "zoo" (own cells, one loop, XLA) or "keras" (Keras' LSTM/GRU: cuDNN on a GPU)
DECODER_CELL = "lstm"  # "lstm" or "gru"
DECODER_UNITS = 512  # decoder RNN units
DECODER_LAYERS = 1  # stacked decoder RNN layers (Luong decoders)
ATTENTION = "general"  # the score of Luong decoders, a name from zoo.layers.names()
ATTENTION_UNITS = 256  # hidden size of the additive and concat scores
ATTENTION_RANK = 64  # rank of the reduced-rank score
INPUT_FEEDING = True  # Luong decoders feed the attentional vector into the next step
TIE_EMBEDDINGS = False  # Luong decoders: the output projection is the target embedding matrix transposed
OUTPUT_UNITS = 256  # maxout units of the deep output layer (bahdanau, rnnenc)
DROPOUT = 0.2  # on embeddings, between encoder layers and before the output layer

# The constructor arguments a recipe sets (one field each in recipes/configs/base.py).
SIZE_FIELDS = (
    "embedding_dim", "encoder_cell", "encoder_units", "encoder_layers", "encoder_implementation",
    "decoder_cell", "decoder_units", "attention_units", "attention_rank", "output_units", "tie_embeddings",
)  # fmt: skip
# Structural choices a recipe leaves at None to keep the preset's (`luong_dot` is dot attention).
CHOICE_FIELDS = ("attention", "decoder_layers", "input_feeding")
# The presets whose class takes every choice field, the Luong decoders (zoo.models.catalog checks it).
CHOICE_PRESETS = ("luong_dot", "luong_general", "luong_concat", "reduced_rank")


def choice_problems(model_name, choices):
    """`["field=value does not apply to preset ...", ...]` for each choice of the mapping `choices` (fields of
    `CHOICE_FIELDS`) that is set (not None) for a preset `model_name` without choices."""
    if model_name in CHOICE_PRESETS:
        return []
    return [f"{field}={value!r} does not apply to preset {model_name!r}; expected it unset (None), or a preset that "
            f"has it: {list(CHOICE_PRESETS)}" for field, value in choices.items() if value is not None]


def checked_size(model_name, field, value, least):
    """`value` as a Python int: any integer type (numpy's too), not a bool, and >= `least` (a vocabulary
    holds the reserved ids PAD, UNK, BOS and EOS first)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        why = " (the reserved ids PAD, UNK, BOS and EOS come first)" if least > 1 else ""
        raise ValueError(f"{model_name}: {field} must be an int >= {least}{why}, received {value!r}.")
    return int(value)
