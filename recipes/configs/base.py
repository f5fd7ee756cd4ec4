"""The fields every recipe has, with their defaults; recipes change what they need."""

import ml_collections
from ml_collections import config_dict

from zoo import constants
from zoo import model_defaults as defaults
from zoo.data import datasets


def get_config():
    """Defaults shared by all recipes, one section at a time."""
    config = ml_collections.ConfigDict()
    config.recipe = "base"  # the recipe's name, recorded in results.json
    for section in (_data, _tokenizers, _model, _optimization, _devices, _evaluation, _export):
        section(config)
    return config


def _data(config):
    """Data: the dataset the training and dev pairs come from."""
    config.dataset = "dates"  # from zoo.data.datasets.names(): "dates" (generated), "tsv" (files), "tfds" (by name)
    # Each dataset's own fields, commented in zoo/data/datasets/<name>.py: dates_train_size,
    # dates_dev_size, dates_seed, dates_languages (dates); train_tsv, dev_tsv, max_bad_fraction (tsv);
    # tfds_name, tfds_data_dir, tfds_train_split, tfds_dev_split, tfds_reverse, tfds_max_train_pairs (tfds).
    config.update(datasets.config_fields())
    # Streaming (dataset "tsv" only): read the training file at every epoch instead of holding it.
    config.stream_train = "auto"  # "auto" (stream a training TSV over 256 MB), "true" or "false" (docs/training.md)
    config.stream_sample_size = constants.STREAM_SAMPLE_SIZE  # streaming: pairs sampled from the file to build the vocabulary on
    config.shuffle_buffer_size = 0  # pairs shuffled together; 0 = all (in memory), 100,000 when streaming


def _tokenizers(config):
    """Tokenizers: how each side's text becomes ids (docs/training.md, Tokenizers)."""
    config.source_tokenizer = "char"  # "char", "word" or "sentencepiece" (subwords)
    config.target_tokenizer = "char"  # "char", "word" or "sentencepiece" (subwords)
    config.source_vocab_size = 0  # most source tokens incl. reserved ones; 0 = no limit (not for sentencepiece)
    config.target_vocab_size = 0  # most target tokens incl. reserved ones; 0 = no limit (not for sentencepiece)
    config.shared_vocab = False  # one vocabulary built on both sides and used for both (same tokenizer and size)
    config.vocab_min_count = 1  # char and word: tokens seen fewer times in training become <unk>
    config.spm_model_type = "unigram"  # sentencepiece: "unigram" or "bpe"
    config.spm_byte_fallback = True  # sentencepiece: unseen characters become UTF-8 byte pieces, never <unk>
    config.spm_normalization = "nmt_nfkc"  # sentencepiece: NFKC "nmt_nfkc", "nfkc", case-folded "nmt_nfkc_cf", "nfkc_cf"; "nfc", "identity"
    config.lowercase = False  # lowercase both sides before tokenizing
    config.max_source_length = 64  # source tokens of a training pair kept (translations read up to max(this, 200))
    config.max_target_length = 64  # target tokens of a training pair kept (before </s>; translations stop at + 1)
    config.drop_long = False  # drop over-long training pairs instead of truncating them


def _model(config):
    """Model: sizes start from zoo/model_defaults.py, as the presets' do."""
    config.model = "bahdanau"  # preset name from zoo.models.presets()
    config.embedding_dim = defaults.EMBEDDING_DIM  # source and target embedding size
    config.encoder_cell = defaults.ENCODER_CELL  # "lstm" or "gru"
    config.encoder_units = defaults.ENCODER_UNITS  # units of each encoder direction
    config.encoder_layers = defaults.ENCODER_LAYERS  # stacked bidirectional encoder layers
    config.encoder_implementation = defaults.ENCODER_IMPLEMENTATION  # "zoo" or "keras" (cuDNN, docs/scaling.md)
    config.decoder_cell = defaults.DECODER_CELL  # "lstm" or "gru"
    config.decoder_units = defaults.DECODER_UNITS  # decoder RNN units
    config.attention_units = defaults.ATTENTION_UNITS  # hidden size of additive/concat scores (ignored by others)
    config.attention_rank = defaults.ATTENTION_RANK  # rank of the reduced_rank score (ignored by others)
    config.output_units = defaults.OUTPUT_UNITS  # maxout output size of bahdanau/rnnenc (ignored by luong_*)
    config.tie_embeddings = defaults.TIE_EMBEDDINGS  # output projection = target embedding^T (luong_*; others ignore it)
    config.dropout = defaults.DROPOUT  # dropout on embeddings, between layers and before the output
    # Choices of the luong_* and reduced_rank presets; None keeps the preset's own.
    config.attention = config_dict.placeholder(str)  # score name from zoo.layers.names(), e.g. "concat"
    config.decoder_layers = config_dict.placeholder(int)  # stacked decoder RNN layers
    config.input_feeding = config_dict.placeholder(bool)  # feed the attentional vector into the next step
    config.precision = "float32"  # "float32", "mixed_bfloat16", "mixed_float16" or "auto" (docs/scaling.md)


def _optimization(config):
    """Optimization: batches, steps, learning rate schedule."""
    config.batch_size = 64  # sentences per batch (length-bucketed), split across the replicas
    config.batch_tokens = 0  # 0 = batch by batch_size; N = rows x longer side's length <= N: ~N target tokens a batch
    config.num_epochs = 10  # most epochs (an epoch = steps_per_epoch steps, or one pass)
    config.steps_per_epoch = 0  # steps between evaluations/checkpoints; 0 = one pass over the data
    config.train_steps = 0  # stop after this many optimizer steps in all (at the end of the host call that
    # reaches them, with steps_per_execution > 1); 0 = no limit
    config.max_train_minutes = 0.0  # wall-clock budget from the start to the end of training, over all runs; 0 = none
    config.learning_rate = 1e-3  # peak learning rate of Adam
    config.lr_schedule = "inverse_sqrt"  # "constant", "inverse_sqrt" (after warmup), "exponential" or "plateau"
    config.warmup_steps = 200  # linear warmup steps from 0 to learning_rate
    config.decay_steps = 1000  # exponential: steps per decay by decay_rate
    config.decay_rate = 0.5  # exponential: factor per decay_steps; plateau: per dev evaluation without progress
    config.min_learning_rate = 1e-5  # the schedule never goes below this
    config.clipnorm = 1.0  # clip each gradient (each variable's) to this L2 norm; 0 = off
    config.global_clipnorm = 0.0  # clip the gradients together to this global L2 norm; 0 = off
    config.loss_normalization = "tokens"  # the loss over the batch's "tokens" or its "sentences" (OpenNMT-py's)
    config.label_smoothing = 0.0  # epsilon of label smoothing (Szegedy et al., 2016)
    config.sampled_vocabulary = 0  # N > 0: each batch's softmax over its target ids and random others, N in all
    config.init_scale = 0.0  # > 0: every weight starts uniform in +-init_scale; 0 = Keras' initializers
    config.seed = 0  # weights initialization and data shuffling seed


def _devices(config):
    """Devices: where and how the steps run (docs/scaling.md)."""
    config.strategy = "auto"  # "auto", "one_device", "mirrored", "multi_worker" (TF_CONFIG) or "tpu"
    config.cpu_replicas = 0  # no GPU/TPU: >= 2 trains `mirrored` replicas of the CPU, side by side (docs/scaling.md)
    config.tpu = ""  # strategy "tpu": a TPU name or grpc:// address; "" = $TPU_NAME or the local TPU
    config.jit_compile = "auto"  # XLA: "auto" (on for GPU/TPU, off on CPU), "true" or "false"
    config.static_shapes = "auto"  # pad to bucket lengths, drop partial batches: "auto" (XLA or >1 replica)
    config.steps_per_execution = 0  # training steps per host call; 0 = 100 on TPU, else 1


def _evaluation(config):
    """Evaluation, early stopping, checkpoints."""
    config.bleu_tokenize = "13a"  # sacreBLEU tokenizer ("13a" words, "char" for dates)
    config.eval_beam_width = 1  # beam width of the dev evaluations during training (1 = greedy)
    config.final_beam_width = constants.DEFAULT_BEAM_WIDTH  # beam width of the final dev evaluation (1 = greedy)
    config.length_penalty = constants.DEFAULT_LENGTH_PENALTY  # GNMT length penalty alpha of beam search
    config.beam_stopping = "exact"  # "exact" bound, or "approximate": live ones scored at their length (faster)
    config.eval_batch_size = 256  # dev sentences decoded at once
    config.max_eval_sentences = 0  # dev sentences decoded during training; 0 = all
    config.early_stopping_patience = 4  # evaluations without BLEU progress before stopping; 0 = never
    config.early_stopping_min_delta = 0.1  # BLEU gain that counts as progress
    config.target_bleu = 0.0  # stop once dev BLEU reaches this; 0 = never
    config.checkpoint_every_steps = 0  # also save the training state every N steps; 0 = each epoch only
    config.checkpoints_to_keep = 2  # training-state checkpoints kept in checkpoints/
    config.num_samples = 5  # sample translations printed at the end
    config.verbose = 1  # Keras progress: 0 silent, 1 progress bar, 2 one line per epoch


def _export(config):
    """Export: the SavedModel written at the end, and its vocabulary selection (docs/decoding.md)."""
    config.export = True  # write a SavedModel to export/<version>/ at the end
    # Vocabulary selection: learn vocab/shortlist.npz from the training pairs and export with it.
    config.shortlist_k = 0  # target tokens allowed per source token (most co-occurring first); 0 = off
    # (Debian fr->en, 8k pieces: k 50 with 2000 frequent cost no test BLEU, k 20 with 1000 0.24; docs/decoding.md)
    config.shortlist_frequent = 2000  # the most frequent target tokens, allowed in every sentence
