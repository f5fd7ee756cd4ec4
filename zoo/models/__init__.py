"""Encoder-decoder models and the catalog of named presets."""

from zoo import model_defaults as defaults  # zoo.models.defaults, as before
from zoo.models.bahdanau import BahdanauSeq2Seq
from zoo.models.catalog import PRESETS, Preset, build, check, get_preset, presets, recipe_overrides
from zoo.models.encoder import BidirectionalEncoder
from zoo.models.keras_recurrent import with_encoder_implementation
from zoo.models.luong import LuongSeq2Seq
from zoo.models.recurrent_cells import GRUCell, LSTMCell
from zoo.models.rnnenc import RNNEncSeq2Seq
from zoo.models.seq2seq import Seq2Seq

__all__ = [
    "BahdanauSeq2Seq",
    "BidirectionalEncoder",
    "GRUCell",
    "LSTMCell",
    "LuongSeq2Seq",
    "PRESETS",
    "Preset",
    "RNNEncSeq2Seq",
    "Seq2Seq",
    "build",
    "check",
    "defaults",
    "get_preset",
    "presets",
    "recipe_overrides",
    "with_encoder_implementation",
]
