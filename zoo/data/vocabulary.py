"""Reserved token ids shared by every tokenizer, model and decoder in the zoo (from `zoo.constants`)."""

from zoo.constants import (  # noqa: F401  re-exported: the data layer's name for them
    BOS,
    BOS_ID,
    EOS,
    EOS_ID,
    FIRST_REGULAR_ID,
    PAD,
    PAD_ID,
    RESERVED_TOKENS,
    UNK,
    UNK_ID,
)
