"""Attention layers: every score function of the attention-based NMT literature.

`names()` lists the scores, `get(name, **kwargs)` makes one by name (docs/contract.md).
"""

from zoo.layers.additive_attention import AdditiveAttention, BahdanauAttention
from zoo.layers.base_attention import BaseAttention
from zoo.layers.concat_attention import ConcatAttention
from zoo.layers.dot_attention import DotAttention
from zoo.layers.general_attention import GeneralAttention, MultiplicativeAttention
from zoo.layers.reduced_rank_attention import ReducedRankAttention
from zoo.layers.registry import aliases, arguments, canonical_name, get, names, register

__all__ = [
    "AdditiveAttention",
    "BahdanauAttention",
    "BaseAttention",
    "ConcatAttention",
    "DotAttention",
    "GeneralAttention",
    "MultiplicativeAttention",
    "ReducedRankAttention",
    "aliases",
    "arguments",
    "canonical_name",
    "get",
    "names",
    "register",
]
