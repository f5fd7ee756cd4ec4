"""A model's sizes: any integer type, and vocabularies that hold the reserved ids."""

import numpy as np
import pytest

import zoo.models

SMALL = dict(embedding_dim=8, encoder_units=8, decoder_units=16)


def test_a_vocabulary_smaller_than_the_reserved_ids_is_refused():
    # Ids 0-3 are PAD, UNK, BOS and EOS: a target vocabulary of 3 has no end token, and every search ran to its limit.
    with pytest.raises(ValueError, match=r"target_vocab_size must be an int >= 4 .*received 3"):
        zoo.models.build("luong_general", 10, 3, **SMALL)
    with pytest.raises(ValueError, match=r"source_vocab_size must be an int >= 4"):
        zoo.models.build("bahdanau", 2, 10, **SMALL)
    with pytest.raises(ValueError, match="decoder_units must be an int >= 1"):
        zoo.models.build("luong_general", 10, 10, embedding_dim=8, encoder_units=8, decoder_units=True)


def test_numpy_integer_sizes_are_python_ints_in_the_config():
    model = zoo.models.build("luong_general", np.int64(10), np.int32(6), embedding_dim=8, encoder_units=8,
                             decoder_units=np.int64(16))
    config = model.get_config()
    assert (config["source_vocab_size"], config["target_vocab_size"], config["decoder_units"]) == (10, 6, 16)
    assert all(type(config[k]) is int for k in ("source_vocab_size", "target_vocab_size", "decoder_units"))
