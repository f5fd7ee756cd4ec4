"""`ServingModule`: the `tf.Module` that becomes the SavedModel.

It holds a zoo model's variables, the source and target tokenizers (their lookup tables)
and the decoders of `zoo.decoding`. Each of its signature methods is tied to its entry of
the signature table (`zoo.export.signatures.SIGNATURES`: name, inputs, warmup inputs) with
`@serving_signature(name)`, which makes it a `tf.function` with the table's input signature.

Inputs are never rejected for their content: a source is normalized and tokenized in
the graph, cut to its first `max_source_length` tokens (documented truncation, so a
huge input costs no more than a maximal one), and an empty source decodes from an
all-padding row (the model attends to nothing and still answers). `beam_width` is
clamped to [1, `max_beam_width`], `num_hypotheses` to [1, beam_width], and a
non-finite `length_penalty` falls back to the export's default; `top_k` is clamped to
[0, target vocabulary] and a NaN `temperature` falls back to 1 (an infinite one draws
uniformly among the `top_k` most probable tokens). The parameters of
`beam_search` and `sample` are per example (`zoo.export.per_example`).

A vocabulary selection table given at export time (`shortlist`) is saved with the variables
and restricts every signature's output layer to each sentence's shortlisted target ids
(`zoo.decoding.Shortlist`), `score` included, so that its `log_prob` stays the one the
searches report; `zoo_export.json` records it as `shortlist` (`{"k", "frequent"}` or null).
It is the export's choice, not a signature input: TF Serving requires every input of a
signature, so a new one would break the requests of existing clients.
"""

import tensorflow as tf

from zoo import constants
from zoo.decoding import Greedy, Sampling, Shortlist, decode, sequence_log_prob, strategy_for
from zoo.decoding.arguments import check_penalties
from zoo.decoding.constraints import MAX_LENGTH_FACTOR, MAX_LENGTH_OFFSET
from zoo.export.per_example import beam_search_per_example, per_example
from zoo.export.signatures import SIGNATURES, serving_signature


class _Untracked:
    """Holds the Keras model out of `tf.Module`'s sight: only its variables are saved."""

    def __init__(self, model):
        self.model = model


def _check_int(field, value, lowest):
    if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
        raise ValueError(f"ServingModule: {field} must be an int >= {lowest}, received {value!r}.")


class ServingModule(tf.Module):
    """A zoo model with its tokenizers and decoders, as the serving signatures.

    Args:
      model: a built zoo `Seq2Seq` model (`encode`/`step`, docs/interfaces.md).
      source_tokenizer, target_tokenizer: `zoo.data` tokenizers (in-graph `encode`,
        `tokenize`, `decode`, `id_to_token`).
      beam_width: beam width of `serving_default`.
      length_penalty: GNMT length penalty alpha of `serving_default`, and of the
        `score` that `greedy` reports (so greedy and beam scores compare).
      coverage_penalty: GNMT coverage penalty beta of every search (0: none).
      max_source_length: sources are cut to their first `max_source_length` tokens.
      max_beam_width: `beam_search`'s `beam_width` is clamped to this (memory bound).
      max_target_length: None, or the most target tokens (end token included) any search
        produces, a cap on each sentence's `2 * source_length + 10` (a model trained on
        targets cut to N tokens: N + 1, as its dev decoding during training).
      shortlist: None, or a `zoo.data.ShortlistTable` that every signature decodes with.
      beam_stopping: "exact" or "approximate", the stopping rule of every beam search
        (`zoo.decoding.BeamSearch`'s `stopping`).
      name: module name.

    Every signature is a `tf.function` with an explicit input signature; call them on
    the object (`module.beam_search(source, 4, 2, 0.6)`) or save with
    `tf.saved_model.save(module, path, signatures=module.signatures())`.
    Outputs are per sentence: a sentence translates the same alone or in any batch.
    """

    def __init__(
        self,
        model,
        source_tokenizer,
        target_tokenizer,
        beam_width=constants.DEFAULT_BEAM_WIDTH,
        length_penalty=constants.DEFAULT_LENGTH_PENALTY,
        coverage_penalty=0.0,
        max_source_length=constants.DEFAULT_MAX_SOURCE_LENGTH,
        max_beam_width=constants.DEFAULT_MAX_BEAM_WIDTH,
        shortlist=None,
        beam_stopping="exact",
        max_target_length=None,
        name="translator",
    ):
        super().__init__(name=name)
        _check_int("beam_width", beam_width, 1)
        _check_int("max_source_length", max_source_length, 1)
        _check_int("max_beam_width", max_beam_width, 1)
        if max_target_length is not None:
            _check_int("max_target_length", max_target_length, 1)
        if beam_width > max_beam_width:
            raise ValueError(
                f"ServingModule: beam_width must be <= max_beam_width={max_beam_width}, received {beam_width}."
            )
        check_penalties(length_penalty, coverage_penalty)  # finite numbers: here, not deep in a traced signature
        if beam_stopping not in constants.BEAM_STOPPING:
            raise ValueError(f"ServingModule: beam_stopping must be one of {list(constants.BEAM_STOPPING)}, "
                             f"received {beam_stopping!r}.")
        for side, tokenizer, size in (
            ("source", source_tokenizer, model.source_vocab_size),
            ("target", target_tokenizer, model.target_vocab_size),
        ):
            if tokenizer.vocab_size != size:
                raise ValueError(
                    f"ServingModule: the {side} tokenizer has {tokenizer.vocab_size} tokens but the "
                    f"model expects a {side} vocabulary of {size}."
                )
        if getattr(model, "encoder_implementation", "zoo") != "zoo":  # Keras' layers trace cuDNN ops on a GPU
            from zoo.models.keras_recurrent import with_encoder_implementation

            model = with_encoder_implementation(model, "zoo")  # the same weights, a graph for any device
        self._keras = _Untracked(model)
        # The variables (not the Keras objects) are what the SavedModel stores and restores.
        self.model_variables = [variable.value for variable in model.variables]
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self.beam_width = beam_width
        self.length_penalty = float(length_penalty)
        self.coverage_penalty = float(coverage_penalty)
        self.beam_stopping = beam_stopping
        self.max_source_length = max_source_length
        self.max_beam_width = max_beam_width
        self.shortlist = None if shortlist is None else Shortlist(shortlist)
        # The longest hypothesis a search can produce; `score` cuts targets there too.
        longest = MAX_LENGTH_FACTOR * max_source_length + MAX_LENGTH_OFFSET
        self.max_target_length = longest if max_target_length is None else min(longest, max_target_length)
        self._length_cap = max_target_length  # every search's `max_length`

    @property
    def model(self):
        return self._keras.model

    def settings(self):
        """The export-time defaults, as written to `assets.extra/zoo_export.json`."""
        return {
            "beam_width": self.beam_width,
            "length_penalty": self.length_penalty,
            "coverage_penalty": self.coverage_penalty,
            "beam_stopping": self.beam_stopping,
            "max_source_length": self.max_source_length,
            "max_target_length": self.max_target_length,
            "max_beam_width": self.max_beam_width,
            "shortlist": None if self.shortlist is None else self.shortlist.settings(),
            "source_vocab_size": self.source_tokenizer.vocab_size,
            "target_vocab_size": self.target_tokenizer.vocab_size,
            "model": type(self.model).__name__,
            "model_name": self.model.name,
            "signatures": list(SIGNATURES),
            # What a process must load before this SavedModel ([]: TensorFlow's own ops only).
            constants.OP_LIBRARIES: self.op_libraries(),
        }

    def op_libraries(self):
        """Sorted Python modules whose ops the tokenizers run (`Tokenizer.required_op_libraries`)."""
        tokenizers = (self.source_tokenizer, self.target_tokenizer)
        return sorted({library for tokenizer in tokenizers for library in tokenizer.required_op_libraries})

    def signatures(self):
        """`{name: tf.function}` for `tf.saved_model.save(..., signatures=...)`."""
        return {name: getattr(self, spec.method) for name, spec in SIGNATURES.items()}

    # -- the signatures --------------------------------------------------------------------

    @serving_signature("serving_default")
    def serving_default(self, source):
        """Beam search with the export's defaults: `translation` (B,), `score` (B,)."""
        strategy = strategy_for(self.beam_width, 1, self.length_penalty, self.coverage_penalty, self.beam_stopping,
                                alignments=False)
        result = decode(self.model, self._source_ids(source), strategy, self._length_cap, self.shortlist)
        return {"translation": self._texts(result.ids)[:, 0], "score": result.scores[:, 0]}

    @serving_signature("greedy")
    def greedy(self, source):
        """Greedy search: `translation` (B,), `score` (B,) ranked like beam search."""
        strategy = Greedy(length_penalty=self.length_penalty, coverage_penalty=self.coverage_penalty, alignments=False)
        result = decode(self.model, self._source_ids(source), strategy, self._length_cap, self.shortlist)
        return {"translation": self._texts(result.ids)[:, 0], "score": result.scores[:, 0]}

    @serving_signature("beam_search")
    def beam_search(self, source, beam_width, num_hypotheses, length_penalty):
        """The `num_hypotheses` best translations, their scores and the best one's attention.

        Returns:
          `translations` string (B, N), `scores` float32 (B, N) (length-normalized,
          descending), `log_probs` float32 (B, N) (plain sums, end token included),
          `attention` float32 (B, T_tgt, T_src) of the best hypothesis (one row per
          target token, end token included; zero rows past its end), `source_tokens`
          string (B, T_src) (after truncation, padded with ""), `target_tokens` string
          (B, T_tgt) of the best hypothesis (ending with "</s>", padded with "").
        """
        source_ids = self._source_ids(source)  # (B, S)
        batch_size = tf.shape(source_ids)[0]
        # An empty batch still answers (0, N) for the N its request asked for.
        widest = tf.clip_by_value(tf.reduce_max(tf.reshape(beam_width, [-1])), 1, self.max_beam_width)
        requested = tf.clip_by_value(tf.reduce_max(tf.reshape(num_hypotheses, [-1])), 1, widest)
        beam_width = tf.clip_by_value(per_example(beam_width, batch_size, "beam_width"), 1, self.max_beam_width)
        num_hypotheses = per_example(num_hypotheses, batch_size, "num_hypotheses")
        num_hypotheses = tf.clip_by_value(num_hypotheses, 1, beam_width)
        length_penalty = per_example(length_penalty, batch_size, "length_penalty")
        length_penalty = tf.where(tf.math.is_finite(length_penalty), length_penalty, self.length_penalty)
        outside = (length_penalty < 0.0) | (length_penalty > constants.MAX_LENGTH_PENALTY)  # as zoo-export refuses it
        refused = tf.debugging.Assert(tf.logical_not(tf.reduce_any(outside)), [  # (an overflowing divisor: tied scores)
            f"beam_search: length_penalty must be between 0 and {constants.MAX_LENGTH_PENALTY}; received",
            tf.boolean_mask(length_penalty, outside)[:1]])
        with tf.control_dependencies([refused]):
            length_penalty = tf.identity(length_penalty)
        result = beam_search_per_example(
            self.model, source_ids, beam_width, num_hypotheses, length_penalty, self.coverage_penalty, requested,
            self.shortlist, self.beam_stopping, self._length_cap,
        )
        best_length = result.lengths[:, 0]  # (B,)
        target_length = tf.reduce_max(tf.concat([best_length, [0]], axis=0))
        best_ids = result.ids[:, 0, :target_length]  # (B, T_tgt)
        inside = tf.range(target_length)[None, :] < best_length[:, None]
        target_tokens = tf.where(inside, self.target_tokenizer.id_to_token(best_ids), "")
        source_tokens = self.source_tokenizer.tokenize(source)[:, : self.max_source_length]
        source_tokens = source_tokens.to_tensor(default_value="", shape=tf.shape(source_ids))
        return {
            "translations": self._texts(result.ids),
            "scores": result.scores,
            "log_probs": result.log_probs,
            "attention": result.attention[:, 0, :target_length, :],
            "source_tokens": source_tokens,
            "target_tokens": target_tokens,
        }

    @serving_signature("score")
    def score(self, source, target):
        """`log_prob` float32 (B,): log p(target | source), end token included.

        Equals the `log_probs` that `beam_search` reports for the same hypothesis (with a
        shortlist, -inf for a target with a token outside the sentence's) when its text encodes
        back to the ids the search produced (not for `<unk>`, nor a segmentation the tokenizer
        would not give: docs/contract.md). Targets are cut to `max_target_length` tokens, the
        longest any search produces.
        """
        tf.debugging.assert_equal(
            tf.shape(source),
            tf.shape(target),
            message="score: expected as many targets as sources (source and target batch sizes differ)",
        )
        source_ids = self._source_ids(source)
        target_ids = self.target_tokenizer.encode(target)[:, : self.max_target_length]
        target_ids = target_ids.to_tensor(constants.PAD_ID)
        return {"log_prob": sequence_log_prob(self.model, source_ids, target_ids, shortlist=self.shortlist)}

    @serving_signature("sample")
    def sample(self, source, temperature, top_k, seed):
        """One translation drawn from the model per sentence (`zoo.decoding.Sampling`).

        Returns:
          `translation` string (B,), `log_prob` float32 (B,): the model's plain
          log p(translation | source), end token included (what `score` gives for it).
        """
        source_ids = self._source_ids(source)
        batch_size = tf.shape(source_ids)[0]
        temperature = per_example(temperature, batch_size, "temperature")
        temperature = tf.where(tf.math.is_nan(temperature), 1.0, temperature)
        top_k = per_example(top_k, batch_size, "top_k")
        top_k = tf.clip_by_value(top_k, 0, self.target_tokenizer.vocab_size)
        seed = per_example(seed, batch_size, "seed")
        strategy = Sampling(temperature=temperature, top_k=top_k, seed=seed, alignments=False)
        result = decode(self.model, source_ids, strategy, self._length_cap, self.shortlist)
        return {"translation": self._texts(result.ids)[:, 0], "log_prob": result.log_probs[:, 0]}

    # -- text <-> ids ----------------------------------------------------------------------

    def _source_ids(self, source):
        """string (B,) -> int32 (B, S), S >= 1: truncated ids padded with PAD_ID.

        The width is at least 1 so that a batch of empty sources is an all-padding row
        (the encoder masks it) rather than a zero-length sequence.
        """
        ids = self.source_tokenizer.encode(source)[:, : self.max_source_length]
        ids = ids.to_tensor(default_value=constants.PAD_ID)
        return tf.pad(ids, [[0, 0], [0, tf.maximum(1 - tf.shape(ids)[1], 0)]])

    def _texts(self, ids):
        """int32 (B, N, T) -> string (B, N): each hypothesis detokenized up to its end token."""
        shape = tf.shape(ids)
        texts = self.target_tokenizer.decode(tf.reshape(ids, [-1, shape[2]]))
        return tf.reshape(texts, shape[:2])
