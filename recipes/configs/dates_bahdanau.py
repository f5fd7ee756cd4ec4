"""The default recipe: Bahdanau attention on the built-in `dates` task, on CPU in minutes."""

from recipes.configs import base


def get_config():
    config = base.get_config()
    config.recipe = "dates_bahdanau"  # the recipe's name, recorded in results.json
    config.model = "bahdanau"  # RNNsearch: additive attention on the previous decoder state
    config.dataset = "dates"  # generated human-written dates -> ISO 8601
    config.source_tokenizer = "char"  # dates are read character by character
    config.target_tokenizer = "char"  # ISO dates are written character by character
    config.max_source_length = 48  # the longest generated dates are ~40 characters
    config.max_target_length = 10  # YYYY-MM-DD
    config.dates_train_size = 20000  # enough distinct dates to generalize to unseen ones
    config.embedding_dim = 64  # small vocabularies (~100 characters) need small embeddings
    config.encoder_units = 64  # per direction
    config.decoder_units = 128  # decoder LSTM
    config.attention_units = 64  # additive score hidden size
    config.output_units = 64  # maxout output size
    config.dropout = 0.0  # 20k fresh pairs do not overfit in a few epochs
    config.batch_size = 128  # a step costs about the same at 64 or 128 on CPU: take the bigger batch
    config.num_epochs = 5  # ~95% exact match after 3-4 epochs (158 steps each)
    config.learning_rate = 5e-3  # high peak: a short run
    config.lr_schedule = "exponential"  # a high rate makes late epochs unstable: halve it every 300 steps
    config.warmup_steps = 100  # linear warmup before the decay
    config.decay_steps = 300  # steps per halving (decay_rate 0.5)
    config.bleu_tokenize = "char"  # YYYY-MM-DD is one 13a word: score characters instead
    config.final_beam_width = 3  # a small beam for the final dev score
    config.early_stopping_patience = 2  # evaluations without BLEU progress
    return config
