"""Reserved token ids shared by every tokenizer, model and decoder in the zoo."""

PAD_ID = 0  # padding; masked out of attention and of the loss
UNK_ID = 1  # unknown token
BOS_ID = 2  # start of sequence: the first decoder input
EOS_ID = 3  # end of sequence: the last decoder target

PAD = "<pad>"
UNK = "<unk>"
BOS = "<s>"
EOS = "</s>"

RESERVED_TOKENS = (PAD, UNK, BOS, EOS)
