"""Recipe: German->English WMT'14 from TFDS (`wmt14_translate/de-en`), a deep Luong-attention LSTM.

The figure it aims at: tensorflow/nmt's README (Benchmarks, WMT German-English) trains 4-layer
LSTMs of 1024 units with a bidirectional encoder (2 bidirectional layers), embeddings of 1024
and 32k BPE units for 350k steps of 128 sentences (~10 epochs of 4.5M pairs), and reports
BLEU 28.0 on newstest2013 (dev) and 28.9 on newstest2015 with beam 10 (27.1 and 27.6
greedy). TFDS's `validation` split of `wmt14_translate/de-en` is newstest2013 and its `test`
split newstest2014; its training data is WMT'14's (Europarl v7, Common Crawl, News Commentary
v9), where tensorflow/nmt trained on WMT'16's. The README calls its other settings similar to
those of its English-Vietnamese runs (scaled Luong attention), while the repository's
`standard_hparams/wmt16.json` names `normed_bahdanau`. tensorflow/nmt scores tokenized text,
zoo sacreBLEU: close measures, not the same one.

English->German from the same data: `--config.tfds_reverse=true`. The tokenizers and the
schedule are those of the `text` recipe, whatever it uses; the vocabularies are 32k a side, as
tensorflow/nmt's BPE. A GPU job: days on one, not a CPU recipe.

    zoo-train --recipe wmt14_de_en --workdir runs/wmt14_de_en
"""

from recipes.configs import text


def get_config():
    config = text.get_config()  # tokenizers, lengths, schedule and evaluation of `text`
    config.recipe = "wmt14_de_en"  # the recipe's name, recorded in results.json
    config.dataset = "tfds"  # TensorFlow Datasets, by name (needs tensorflow-datasets)
    config.tfds_name = "wmt14_translate/de-en"  # (German, English) pairs, 4.5M for training
    config.tfds_dev_split = "validation"  # newstest2013, tensorflow/nmt's dev set
    config.source_vocab_size = 32000  # tensorflow/nmt: 32k BPE units
    config.target_vocab_size = 32000  # the same on the target side
    config.model = "luong_general"  # global attention, general score (tensorflow/nmt: scaled Luong)
    config.embedding_dim = 1024  # tensorflow/nmt WMT sizes: embeddings 1024
    config.encoder_units = 1024  # 1024 units per direction
    config.encoder_layers = 2  # 2 bidirectional layers ("4 layers" in tensorflow/nmt's count)
    config.decoder_units = 1024  # 1024-unit decoder LSTMs
    config.decoder_layers = 4  # four stacked decoder layers
    config.dropout = 0.2  # tensorflow/nmt's dropout
    config.batch_size = 128  # tensorflow/nmt's batch
    config.steps_per_epoch = 5000  # steps between dev evaluations (~1/7 of a pass)
    config.num_epochs = 70  # 350k steps in all, tensorflow/nmt's ~10 epochs
    config.final_beam_width = 10  # the beam of the figure aimed at
    return config
