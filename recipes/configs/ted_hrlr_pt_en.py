"""Recipe: Portuguese->English TED talks from TFDS (`ted_hrlr_translate/pt_to_en`), Luong attention.

The data: TFDS's `ted_hrlr_translate/pt_to_en`, the corpus of Qi et al., "When and Why are
Pre-trained Word Embeddings Useful for Neural Machine Translation?" (NAACL 2018): about 52k
training, 1.2k validation and 1.8k test pairs. TensorFlow's tutorial "Neural machine
translation with a Transformer and Keras" trains on it (a 4-layer Transformer, d_model 128,
20 epochs) but reports token accuracy, not BLEU, so it gives no figure to compare with.

The model and the figure it aims at: tensorflow/nmt's README (Benchmarks, IWSLT
English-Vietnamese, also TED talks, 133k pairs) trains 2-layer LSTMs of 512 units with a
bidirectional encoder, embeddings of 512, scaled Luong attention and dropout 0.2, and reports
BLEU 26.1 on tst2013 with beam 10 (25.5 greedy). These are its sizes; the target is the same
region on this smaller corpus, not a like-for-like comparison (another language pair, and
tensorflow/nmt scores tokenized text where zoo reports sacreBLEU).

The tokenizers and the schedule are those of the `text` recipe, whatever it uses.

    zoo-train --recipe ted_hrlr_pt_en --workdir runs/ted_pt_en
"""

from recipes.configs import text


def get_config():
    config = text.get_config()  # tokenizers, lengths, schedule and evaluation of `text`
    config.recipe = "ted_hrlr_pt_en"  # the recipe's name, recorded in results.json
    config.dataset = "tfds"  # TensorFlow Datasets, by name (needs tensorflow-datasets)
    config.tfds_name = "ted_hrlr_translate/pt_to_en"  # (Portuguese, English) pairs
    config.tfds_dev_split = "validation"  # 1.2k pairs; the test split is left for zoo-eval
    config.model = "luong_general"  # global attention, general score (tensorflow/nmt: scaled Luong)
    config.embedding_dim = 512  # tensorflow/nmt IWSLT'15 sizes: embeddings 512
    config.encoder_units = 512  # one bidirectional layer of 512 units per direction
    config.encoder_layers = 1  # "2 layers" in tensorflow/nmt's count: one forward, one backward
    config.decoder_units = 512  # 512-unit decoder LSTMs
    config.decoder_layers = 2  # two stacked decoder layers
    config.dropout = 0.2  # tensorflow/nmt's keep_prob 0.8
    config.batch_size = 128  # tensorflow/nmt's batch
    config.steps_per_epoch = 400  # about one pass over the 52k training pairs between evaluations
    config.num_epochs = 15  # ~15 passes (tensorflow/nmt: ~12 epochs); early stopping may end sooner
    config.final_beam_width = 10  # the beam of the figure aimed at
    return config
