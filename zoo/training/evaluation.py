"""Translating a list of sentences with a trained model and scoring it against references."""

import json
import os
import time

import numpy as np
import tensorflow as tf

from zoo import decoding, metrics


class Translator:
    """Batched greedy or beam-search translation of Python strings with a Keras model.

    The search runs in one `tf.function` per beam width, traced once for any batch shape.
    Sentences are decoded in batches of similar length (less padding), and returned in
    the input order.

    Args:
      model: a `zoo.models.Seq2Seq` (`encode` / `step`).
      source_tokenizer, target_tokenizer: `zoo.data` tokenizers.
      max_source_length: source tokens kept per sentence; None for all.
      max_target_length: most target tokens produced, end token included; None lets the
        search pick `2 * S + 10`.
      length_penalty: GNMT alpha of beam search.
    """

    def __init__(self, model, source_tokenizer, target_tokenizer, max_source_length=None,
                 max_target_length=None, length_penalty=0.6):
        self.model = model
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.max_source_length = max_source_length
        self.max_target_length = max_target_length
        self.length_penalty = length_penalty
        self._searches = {}

    def _search(self, beam_width):
        if beam_width not in self._searches:
            max_length = self.max_target_length

            @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
            def search(source_ids):  # (B, S) -> DecodingResult with N = 1
                if beam_width == 1:
                    return decoding.greedy_search(self.model, source_ids, max_length=max_length)
                return decoding.beam_search(
                    self.model, source_ids, beam_width=beam_width, num_hypotheses=1,
                    length_penalty=self.length_penalty, max_length=max_length,
                )

            self._searches[beam_width] = search
        return self._searches[beam_width]

    def encode(self, sources):
        """list of str -> int32 `(B, S)` source ids padded with 0 (at least one column)."""
        ids = self.source_tokenizer.encode(tf.constant(sources, dtype=tf.string))
        if self.max_source_length:
            ids = ids[:, : self.max_source_length]
        ids = ids.to_tensor(default_value=0)
        if ids.shape[1] == 0:
            ids = tf.zeros([len(sources), 1], tf.int32)  # all-empty batch: one pad column
        return ids

    def translate(self, sources, beam_width=1, batch_size=256, return_attention=False):
        """Translates `sources` (list of str).

        Returns:
          list of str hypotheses; with `return_attention`, also a list of
          `(attention (T, S) float32 array, target ids (T,))` per sentence, trimmed to the
          real tokens.
        """
        sources = list(sources)
        if not sources:
            return ([], []) if return_attention else []
        search = self._search(int(beam_width))
        order = np.argsort([len(s) for s in sources], kind="stable")
        hypotheses = [None] * len(sources)
        attentions = [None] * len(sources)
        for start in range(0, len(sources), batch_size):
            index = order[start : start + batch_size]
            source_ids = self.encode([sources[i] for i in index])
            result = search(source_ids)
            best = result.ids[:, 0, :]  # (B, T)
            texts = self.target_tokenizer.decode(best).numpy()
            lengths = result.lengths[:, 0].numpy()
            source_lengths = tf.reduce_sum(tf.cast(source_ids != 0, tf.int32), axis=1).numpy()
            for row, i in enumerate(index):
                hypotheses[i] = texts[row].decode("utf-8")
                if return_attention:
                    t, s = lengths[row], source_lengths[row]
                    attentions[i] = (result.attention[row, 0, :t, :s].numpy(), best[row, :t].numpy())
        return (hypotheses, attentions) if return_attention else hypotheses


def evaluate(translator, pairs, beam_width=1, batch_size=256, bleu_tokenize="13a"):
    """Translates the sources of `pairs` and scores them against their targets.

    Returns:
      `(scores, hypotheses)`: a `zoo.metrics.Scores` and the list of hypotheses.
    """
    sources = [source for source, _ in pairs]
    references = [target for _, target in pairs]
    hypotheses = translator.translate(sources, beam_width=beam_width, batch_size=batch_size)
    return metrics.score(hypotheses, references, bleu_tokenize=bleu_tokenize), hypotheses


def _bleu_tokenize_of(path):
    """The `bleu_tokenize` of the training config next to a workdir or its export, if any."""
    path = os.path.abspath(path)
    for directory in (path, os.path.dirname(path), os.path.dirname(os.path.dirname(path)),
                      os.path.dirname(os.path.dirname(os.path.dirname(path)))):
        config_path = os.path.join(directory, "config.json")
        if os.path.isfile(config_path):
            with open(config_path, encoding="utf-8") as f:
                return json.load(f).get("bleu_tokenize")
    return None


def evaluate_model(model_path, tsv_path, beam_width=None, batch_size=64, bleu_tokenize=None):
    """Scores an export (or a training workdir) on a TSV test set, as `zoo-eval` prints it.

    Args:
      model_path: a SavedModel, an export base directory or a `zoo-train` workdir (see
        `zoo.export.translation.resolve_model`).
      tsv_path: `source<TAB>target` pairs.
      beam_width: None for the export's default search, else beam search of that width.
      batch_size: sentences translated at once.
      bleu_tokenize: sacreBLEU tokenizer; None takes the one the model was trained with
        (its workdir's config.json), else `13a`.

    Returns:
      dict: `bleu`, `chrf`, `bleu_signature`, `chrf_signature`, `exact_match`,
      `sentences`, `sentences_per_second`, `seconds`, `model`, `decoding`.
    """
    from zoo.data import read_tsv
    from zoo.export.translation import load_translate_fn

    pairs = read_tsv(tsv_path)
    translate, description = load_translate_fn(model_path, beam_width=beam_width)
    bleu_tokenize = bleu_tokenize or _bleu_tokenize_of(model_path) or "13a"
    sources = [source for source, _ in pairs]
    order = np.argsort([len(s) for s in sources], kind="stable")  # similar lengths decode faster together
    hypotheses = [None] * len(sources)
    started = time.monotonic()
    for start in range(0, len(sources), batch_size):
        index = order[start : start + batch_size]
        outputs = translate([sources[i].encode("utf-8") for i in index])
        for i, text in zip(index, outputs):
            hypotheses[i] = text.decode("utf-8")
    seconds = time.monotonic() - started
    scores = metrics.score(hypotheses, [target for _, target in pairs], bleu_tokenize=bleu_tokenize)
    return dict(scores.as_dict(), sentences_per_second=len(pairs) / seconds if seconds else None,
                seconds=seconds, model=os.fspath(model_path), decoding=description)
