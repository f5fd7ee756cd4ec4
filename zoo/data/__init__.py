"""Data for the zoo: in-graph tokenizers, TSV files (in memory or streamed), TFDS, the `dates` task, tf.data.

The names are resolved on first use (PEP 562), as in `zoo.inference`: `zoo-eval` reads its test
set with `zoo.data.tsv` (standard library only) and so imports neither TensorFlow's tokenizers
nor, through TensorFlow, Keras. The tokenizer kinds register themselves when
`zoo.data.tokenizer_kinds` is first asked for one.
"""

import importlib
import importlib.util

_MODULES = {
    "vocabulary": ("BOS_ID", "EOS_ID", "PAD_ID", "UNK_ID"),
    "char_tokenizer": ("CharTokenizer",),
    "dates": ("DateExample", "date_formats", "date_languages", "dates_splits", "generate_dates", "sample_dates",
              "write_dates_tsv"),
    "normalization": ("normalize",),
    "pipeline": ("count_tokens", "default_bucket_boundaries", "make_dataset"),
    "sentencepiece_tokenizer": ("SentencePieceTokenizer",),
    "shortlist": ("ShortlistTable", "learn_shortlist", "learn_shortlist_from_texts"),
    "tfds_pairs": ("tfds_pairs",),
    "tokenizer": ("Tokenizer",),
    "tokenizer_kinds": ("build_tokenizer", "build_tokenizer_pair", "load_tokenizer", "tokenizer_types"),
    "tsv": ("BadLine", "DataError", "TsvReport", "held_out_size", "read_tsv", "read_tsv_report", "split_pairs",
            "write_tsv"),
    "tsv_stream": ("TsvScan", "scan_tsv", "stream_tsv_dataset"),
    "word_tokenizer": ("WordTokenizer",),
}
_LAZY = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}

__all__ = sorted(_LAZY) + ["datasets", "vocabulary"]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a submodule: zoo.data.datasets, ...
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
