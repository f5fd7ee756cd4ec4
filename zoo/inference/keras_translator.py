"""`KerasTranslator`: translation of Python strings with an in-memory Keras model and its tokenizers.

What training's dev evaluation and `zoo-translate` on a workdir without an export use; an
export does the same in its graph (`zoo.export.ServingModule`).
"""

import tensorflow as tf

from zoo import constants, decoding
from zoo.inference.batching import batches_by_length

GREEDY = "greedy"
BEAM_SEARCH = "beam_search"


class KerasTranslator:
    """Batched greedy or beam-search translation of Python strings with a Keras model.

    The search runs in one `tf.function` per (search, beam width), traced once for any
    batch shape. `translate` decodes sentences in batches of similar length (less
    padding) and returns them in the input order.

    Args:
      model: a `zoo.models.Seq2Seq` (`encode` / `step`).
      source_tokenizer, target_tokenizer: `zoo.data` tokenizers.
      max_source_length: source tokens kept per sentence; None for all.
      max_target_length: most target tokens produced, end token included; None lets the
        search pick `2 * S + 10`.
      length_penalty: GNMT alpha of beam search.
      coverage_penalty: GNMT beta of beam search (0: none).
      beam_stopping: "exact" or "approximate" (`zoo.decoding.BeamSearch`'s `stopping`).
      shortlist: None for the whole target vocabulary, or a `zoo.decoding.Shortlist`
        (vocabulary selection: each sentence's output layer restricted to its shortlisted ids).

    Example:

        translator = KerasTranslator(model, source_tokenizer, target_tokenizer)
        translator.translate(["3 mars 2021"], beam_width=5)   # ["2021-03-03"]
    """

    def __init__(self, model, source_tokenizer, target_tokenizer, max_source_length=None,
                 max_target_length=None, length_penalty=constants.DEFAULT_LENGTH_PENALTY, coverage_penalty=0.0,
                 shortlist=None, beam_stopping="exact"):
        self.model = model
        self.shortlist = shortlist
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.max_source_length = max_source_length
        self.max_target_length = max_target_length
        self.length_penalty = length_penalty
        self.coverage_penalty = coverage_penalty
        self.beam_stopping = beam_stopping
        self._searches = {}

    def _search(self, beam_width, search=None, alignments=True):
        """The `tf.function` `source_ids (B, S) -> DecodingResult` (N = 1) of a search.

        `search` is "greedy" or "beam_search"; None picks greedy for a beam width of 1.
        `alignments=False`: the search keeps no attention (the result's is zeros).
        """
        beam_width = int(beam_width)
        if beam_width < 1:
            raise ValueError(f"beam_width must be >= 1, received {beam_width}")
        if search not in (None, GREEDY, BEAM_SEARCH):
            raise ValueError(f"search must be {GREEDY!r} or {BEAM_SEARCH!r}, received {search!r}")
        penalties = {"length_penalty": self.length_penalty, "coverage_penalty": self.coverage_penalty}
        if search == BEAM_SEARCH:  # beam search even at width 1, as the export's `beam_search` signature does
            strategy = decoding.BeamSearch(beam_width, num_hypotheses=1, stopping=self.beam_stopping,
                                           alignments=alignments, **penalties)
        else:
            strategy = decoding.strategy_for(1 if search == GREEDY else beam_width, stopping=self.beam_stopping,
                                             alignments=alignments, **penalties)
        key = (type(strategy).__name__, beam_width if isinstance(strategy, decoding.BeamSearch) else 1, alignments)
        if key not in self._searches:
            max_length = self.max_target_length

            # No AutoGraph: the search is written with tf.while_loop and tf.cond, and converting its
            # Python source took most of the first call (greedy on a tiny model: 7.9 s with it, 1.1 s without).
            @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)], autograph=False)
            def run(source_ids):  # (B, S)
                return decoding.decode(self.model, source_ids, strategy, max_length=max_length,
                                       shortlist=self.shortlist)

            self._searches[key] = run
        return self._searches[key]

    def encode(self, sources):
        """list of str (or bytes) -> int32 `(B, S)` source ids padded with PAD_ID (S >= 1)."""
        ids = self.source_tokenizer.encode(tf.constant(sources, dtype=tf.string))
        if self.max_source_length:
            ids = ids[:, : self.max_source_length]
        ids = ids.to_tensor(default_value=constants.PAD_ID)
        if ids.shape[1] == 0:
            ids = tf.fill([len(sources), 1], constants.PAD_ID)  # all-empty batch: one pad column
        return ids

    def decode_batch(self, sources, beam_width=1, search=None, alignments=True):
        """One batch, as it comes: `(texts, result, source_ids)`.

        `alignments=False`: the search keeps no attention (the result's is zeros; faster).

        Returns:
          `texts` numpy bytes `(B,)` (the best hypotheses), the search's
          `DecodingResult` (N = 1) and the int32 `(B, S)` source ids it decoded.
        """
        source_ids = self.encode(sources)
        result = self._search(beam_width, search, alignments)(source_ids)
        return self.target_tokenizer.decode(result.ids[:, 0, :]).numpy(), result, source_ids

    def translate(self, sources, beam_width=1, batch_size=256, return_attention=False, search=None, progress=None):
        """Translates `sources` (list of str).

        Args:
          sources: list of str.
          beam_width: 1 for greedy search (unless `search` says otherwise), else the beam.
          batch_size: most sentences decoded at once.
          return_attention: also return each sentence's attention.
          search: "greedy" or "beam_search" (then with `beam_width`, even 1); None picks
            greedy for a beam width of 1.
          progress: a `zoo.progress.Progress` told of each batch decoded, or None.

        Returns:
          list of str hypotheses; with `return_attention`, also a list of
          `(attention (T, S) float32 array, target ids (T,))` per sentence, trimmed to the
          real tokens.
        """
        sources = list(sources)
        hypotheses = [None] * len(sources)
        attentions = [None] * len(sources)
        for index in batches_by_length(sources, batch_size):
            texts, result, source_ids = self.decode_batch([sources[i] for i in index], beam_width, search,
                                                          alignments=return_attention)
            lengths = result.lengths[:, 0].numpy()
            source_lengths = tf.reduce_sum(tf.cast(source_ids != constants.PAD_ID, tf.int32), axis=1).numpy()
            for row, i in enumerate(index):
                hypotheses[i] = texts[row].decode("utf-8")
                if return_attention:
                    t, s = lengths[row], source_lengths[row]
                    attentions[i] = (result.attention[row, 0, :t, :s].numpy(), result.ids[row, 0, :t].numpy())
            if progress is not None:
                progress.update(len(index))
        return (hypotheses, attentions) if return_attention else hypotheses
