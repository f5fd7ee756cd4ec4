"""Data for the zoo: in-graph tokenizers, TSV files (in memory or streamed), TFDS, the `dates` task, tf.data."""

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
from zoo.data.normalization import normalize
from zoo.data.pipeline import count_tokens, default_bucket_boundaries, make_dataset
from zoo.data.sentencepiece_tokenizer import SentencePieceTokenizer
from zoo.data.shortlist import ShortlistTable, learn_shortlist, learn_shortlist_from_texts
from zoo.data.tfds_pairs import tfds_pairs
from zoo.data.tokenizer import Tokenizer
from zoo.data.tokenizer_kinds import (
    build_tokenizer,
    build_tokenizer_pair,
    load_tokenizer,
    tokenizer_types,
)
from zoo.data.tsv import BadLine, DataError, TsvReport, read_tsv, read_tsv_report, write_tsv
from zoo.data.tsv_stream import TsvScan, scan_tsv, stream_tsv_dataset
from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from zoo.data.word_tokenizer import WordTokenizer
from zoo.data import datasets  # the named datasets of zoo-train (zoo.data.datasets.names())
