"""Translating a list of sentences with a trained model and scoring it against references."""

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
