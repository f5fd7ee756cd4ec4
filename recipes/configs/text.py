"""Recipe: subword translation of the user's own parallel TSV files (SentencePiece, Luong general attention)."""

from recipes.configs import base


def get_config():
    config = base.get_config()
    config.recipe = "text"  # the recipe's name, recorded in results.json
    config.dataset = "tsv"  # needs --train_tsv (and --dev_tsv, else 2% of train is held out)
    config.model = "luong_general"  # global attention, general score, input feeding
    # Subwords: frequent words stay whole, rare ones are spelt in pieces, so no word is <unk>
    # (--config.source_tokenizer=word --config.target_tokenizer=word for words, as before).
    config.source_tokenizer = "sentencepiece"  # trained on the training sources (words: 2.32, row "words")
    config.target_tokenizer = "sentencepiece"  # and one on the training targets
    config.spm_model_type = "unigram"  # SentencePiece's default; "bpe" is the other
    config.source_vocab_size = 8000  # pieces incl. reserved and byte pieces; a small corpus gets fewer, with a warning
    config.target_vocab_size = 8000  # the same on the target side
    config.spm_byte_fallback = True  # characters never seen in training become byte pieces, not <unk>
    config.shared_vocab = False  # a vocabulary per side (shared: 1.84 at step 300, row "shared_vocab")
    config.lowercase = False  # keep case: it is part of the translation
    config.max_source_length = 80  # pieces: ~1.5 a word (Debian fr-en, 8000), so as many sentences fit whole as in 50 words
    config.max_target_length = 80  # pieces, before </s>
    config.embedding_dim = 256  # reference sizes: bi-LSTM 2 x 256, decoder 512
    config.encoder_units = 256  # per direction
    config.decoder_units = 512  # = 2 x encoder_units, so the dot score would fit too
    # The output projection is the target embedding matrix (through a 512 -> 256 bottleneck):
    # dev BLEU after 300 steps 3.93 against 2.91 (row "tied_embeddings"), and the 20-minute
    # side by side of docs/performance.md "Quality per step".
    config.tie_embeddings = True  # output projection = target embedding^T; untied: row "baseline"
    # Optimization: OpenNMT-py's settings, which learn far more per step than the zoo's former
    # defaults (inverse-sqrt schedule with 500 warmup steps, each gradient clipped to 1, loss
    # per token, Glorot initialization, dropout 0.2): in the ablation of docs/performance.md "Quality per
    # step" (benchmarks/quality.py; rows named below), dev BLEU after 300 steps rose from 0.1
    # (row "previous_defaults") to 2.9 (row "baseline", these settings); each row below
    # changes one of them back (its dev BLEU after 300 steps).
    config.dropout = 0.3  # OpenNMT-py's; 0.2 is ahead early (3.10, row "dropout_0.2"), untried at 20 min
    config.init_scale = 0.1  # uniform +-0.1 for every weight; Keras' initializers: 0.02 (row "init_glorot")
    config.loss_normalization = "sentences"  # the loss of a sentence; per token: 2.38 (row "loss_per_token")
    config.clipnorm = 0.0  # no per-variable clipping (each variable to norm 1: 2.06, row "clip_per_variable_1")...
    config.label_smoothing = 0.0  # none, as OpenNMT-py's default; 0.1: 2.79 (row "label_smoothing_0.1")
    config.global_clipnorm = 5.0  # ...but all gradients together clipped to norm 5 (OpenNMT-py's max_grad_norm)
    config.precision = "auto"  # bfloat16 where it measures faster (docs/scaling.md), float16 on older GPUs
    config.batch_size = 64  # sentences per batch (~2000 tokens a batch instead: 2.39, row "token_batches")
    config.num_epochs = 50  # evaluation intervals; the budget or early stopping ends sooner
    config.steps_per_epoch = 200  # evaluate the dev set every 200 steps (~5 min on a 2-core CPU)
    config.learning_rate = 1e-3  # Adam
    config.lr_schedule = "constant"  # no warmup, no decay; 500 warmup steps then 1/sqrt: 2.07 (row "lr_inverse_sqrt")
    config.warmup_steps = 0  # the schedule starts at the full rate
    config.bleu_tokenize = "13a"  # sacreBLEU's default word tokenizer
    config.max_eval_sentences = 500  # dev sentences decoded during training (all at the end)
    config.final_beam_width = 5  # beam of the final dev score
    config.early_stopping_patience = 5  # evaluations without BLEU progress
    return config
