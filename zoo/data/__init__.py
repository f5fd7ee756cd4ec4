"""Data for the zoo: in-graph tokenizers, TSV files, the built-in `dates` task, tf.data."""

from zoo.data import vocabulary
from zoo.data.char_tokenizer import CharTokenizer
from zoo.data.dates import (
    DateExample,
    date_formats,
    date_languages,
    dates_splits,
    generate_dates,
    sample_dates,
    write_dates_tsv,
)
from zoo.data.pipeline import count_tokens, default_bucket_boundaries, make_dataset
from zoo.data.tokenizer import (
    Tokenizer,
    build_tokenizer,
    load_tokenizer,
    normalize,
    tokenizer_types,
)
from zoo.data.tsv import BadLine, DataError, TsvReport, read_tsv, read_tsv_report, write_tsv
from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from zoo.data.word_tokenizer import WordTokenizer
from zoo.data import datasets  # the named datasets of zoo-train (zoo.data.datasets.names())
