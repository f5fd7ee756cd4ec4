"""Loading what `--model` names as one function: a batch of source lines -> their translations.

An export runs with TensorFlow alone (plus the kernels of the op libraries its
`zoo_export.json` lists, e.g. TensorFlow Text's for a SentencePiece export, loaded without
their Python packages): this module imports neither Keras nor the model code unless it is
handed a workdir that has no export yet, and for an export it even keeps `import tensorflow`
from importing Keras, JAX and SciPy (`zoo.startup.import_tensorflow`: TensorFlow looks them up
eagerly at import, Keras alone about a third of its import time), so the first translation
comes seconds after the process starts. The phases end with `zoo.startup.mark`
(`--profile_startup`).
"""

import os

from zoo import constants, startup
from zoo.inference.resolve import WORKDIR, resolve_model

EXPECTED_SIGNATURES = ("serving_default", "beam_search")  # the two that `zoo-translate` and `zoo-eval` call
_FIRST_CALL = "the first call of the signature (the first translation)"


def _load_saved_model(tf, path, settings):
    """`tf.saved_model.load(path)`, refusing a corrupt SavedModel or one that is not a zoo export.

    The op libraries that `settings` (its `zoo_export.json`) lists are loaded first.

    Raises:
      MissingOpLibraryError: one of them does not load (one line naming the package to install).
      ValueError: the files do not load, or the signatures are not those of a zoo export
        (the message names what was found and what was expected).
    """
    try:
        constants.load_export_op_libraries(tf, settings)
    except constants.MissingOpLibraryError as error:
        raise constants.MissingOpLibraryError(f"{path}: {error}") from None
    startup.mark("op_libraries", f"the op libraries of zoo_export.json {settings.get(constants.OP_LIBRARIES, [])}")
    try:
        loaded = tf.saved_model.load(path)
    except Exception as error:  # protobuf, TensorFlow and OS errors alike: the files are not a SavedModel
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(f"{path}: cannot load the SavedModel ({reason}); expected a version written by "
                         "zoo-export or zoo-train") from None
    found = sorted(loaded.signatures.keys())
    for name in EXPECTED_SIGNATURES:
        if name not in loaded.signatures or "source" not in loaded.signatures[name].structured_input_signature[1]:
            raise ValueError(f"{path}: not a zoo export: it has signatures {found}; expected "
                             f"{list(EXPECTED_SIGNATURES)} taking a 'source' string tensor")
    startup.mark("load_saved_model", "tf.saved_model.load and the check of its signatures")
    return loaded


def load_translate_fn(path, beam_width=None, sampling=None, shortlist=None):
    """A function `list of bytes -> list of bytes` translating a batch of source lines.

    Args:
      path: see `resolve_model`.
      beam_width: None for the export's `serving_default` (its own default beam);
        1 for the `greedy` signature (greedy search); an int > 1 for the `beam_search`
        signature with that beam and one hypothesis.
        A workdir without an export decodes the same way with its Keras model.
      sampling: None, or `{"temperature": float > 0, "top_k": int >= 0, "seed": int}`
        for the `sample` signature (a workdir: `zoo.decoding.Sampling`); then
        `beam_width` must be None.
      shortlist: None decodes as the model was set up: an export with the shortlist it
        was exported with (`zoo_export.json`), a workdir as its config says; True or False
        asks for vocabulary selection or the whole vocabulary (a workdir's
        `vocab/shortlist.npz`; an export exported otherwise is a `ValueError`).

    Returns:
      `(translate, description)`: the function and a line saying what runs.

    Raises:
      zoo.constants.MissingOpLibraryError: the export (or the workdir's tokenizer) runs ops
        that do not load here; the one-line message names the package to install.
      FileNotFoundError: a shortlist asked of a workdir that has none.
    """
    if beam_width is not None and beam_width < 1:
        raise ValueError(f"beam_width must be >= 1, received {beam_width}")
    if sampling is not None:
        _check_sampling(sampling, beam_width)
    kind, path = _resolve(path, shortlist)
    tf = startup.import_tensorflow(need_keras=kind == WORKDIR)
    if kind == WORKDIR:
        translate, description = _load_workdir_fn(path, beam_width, sampling, shortlist)
        return startup.mark_first_call(translate, "first_translation", _FIRST_CALL), description
    settings = constants.read_export_settings(path)
    listed = _exported_shortlist(path, settings, shortlist)
    loaded = _load_saved_model(tf, path, settings)
    length_penalty = float(settings.get("length_penalty", constants.DEFAULT_LENGTH_PENALTY))
    if sampling is not None:
        sample = _signature(loaded, "sample", path)

        def translate(lines):
            outputs = sample(
                source=tf.constant(lines, tf.string),
                temperature=tf.constant(sampling["temperature"], tf.float32),
                top_k=tf.constant(sampling["top_k"], tf.int32),
                seed=tf.constant(sampling["seed"], tf.int32),
            )
            return outputs["translation"].numpy().tolist()

        description = f"{path}: sample ({_describe_sampling(sampling)})"
    elif beam_width in (None, 1):  # the export's default, or greedy search: a beam of one as toolkits mean it
        # (beam search at width 1 would go on past a best end token under a length penalty)
        signature = _signature(loaded, "serving_default" if beam_width is None else "greedy", path)

        def translate(lines):
            return signature(source=tf.constant(lines, tf.string))["translation"].numpy().tolist()

        description = (f"{path}: serving_default (beam width {settings.get('beam_width', '?')})"
                       if beam_width is None else f"{path}: greedy")
    else:
        # The signature clamps the beam to the export's max_beam_width: say the width that runs.
        beam_width = min(beam_width, int(settings.get("max_beam_width", constants.DEFAULT_MAX_BEAM_WIDTH)))
        beam = loaded.signatures["beam_search"]

        def translate(lines):
            outputs = beam(
                source=tf.constant(lines, tf.string),
                beam_width=tf.constant(beam_width, tf.int32),
                num_hypotheses=tf.constant(1, tf.int32),
                length_penalty=tf.constant(length_penalty, tf.float32),
            )
            return outputs["translations"][:, 0].numpy().tolist()

        description = f"{path}: beam_search (beam width {beam_width}, length penalty {length_penalty})"
    # The functions hold their module weakly: keep it alive as long as `translate` lives.
    translate.module = loaded
    return startup.mark_first_call(translate, "first_translation", _FIRST_CALL), description + listed


def _signature(loaded, name, path):
    """`loaded.signatures[name]`, or a `ValueError` naming the signatures the SavedModel has."""
    if name not in loaded.signatures:
        raise ValueError(f"{path} has no {name!r} signature (it has {sorted(loaded.signatures.keys())}: exported "
                         "before it existed, or not by zoo); re-export it with zoo-export")
    return loaded.signatures[name]


def _resolve(path, shortlist):
    """`resolve_model(path)`, except that a workdir asked for the other shortlist choice than its
    newest export's (`--shortlist` / `--noshortlist`) decodes its own best.keras as asked."""
    kind, resolved = resolve_model(path)
    if (kind != WORKDIR and shortlist is not None and resolved != path
            and os.path.isfile(os.path.join(path, constants.BEST_MODEL_FILE))
            and bool(shortlist) != bool(constants.read_export_settings(resolved).get("shortlist"))):
        return WORKDIR, path
    return kind, resolved


def _exported_shortlist(path, settings, shortlist):
    """What the description says of the shortlist an export decodes with (`zoo_export.json`'s
    `shortlist`, the export's choice); a `ValueError` if `shortlist` asks for the other."""
    exported = settings.get("shortlist")
    if shortlist is not None and bool(shortlist) != bool(exported):
        has = f"with a shortlist ({exported})" if exported else "without a shortlist"
        option = "--shortlist" if shortlist else "--noshortlist"
        raise ValueError(f"{path} was exported {has}: the choice is the export's; re-export it with "
                         f"zoo-export {option}, or pass the workdir")
    return _describe_shortlist(exported) if exported else ""


def _describe_shortlist(settings):
    return f", shortlist k={settings['k']} frequent={settings['frequent']}"


def _check_sampling(sampling, beam_width):
    if beam_width is not None:
        raise ValueError(f"sampling and a beam width exclude each other; received beam_width={beam_width}")
    # float32 and int32, as the export's `sample` takes them (1e39 would read as inf, 2**32 + 3 as 3)
    if not 0 < sampling.get("temperature", 0) <= constants.FLOAT32_MAX or not 0 <= sampling.get("top_k", 0) <= constants.INT32_MAX:
        raise ValueError(f"sampling needs a temperature > 0 (at most {constants.FLOAT32_MAX:.7g}) and a top_k "
                         f"from 0 to {constants.INT32_MAX}, received {sampling}")


def _describe_sampling(sampling):
    return f"temperature {sampling['temperature']}, top_k {sampling['top_k']}, seed {sampling['seed']}"


def _load_workdir_fn(path, beam_width, sampling=None, shortlist=None):
    """`load_translate_fn` for a workdir without an export: its `best.keras`, decoded as the export would."""
    # Imported only here: decoding a workdir needs Keras and the model code.
    from zoo.decoding import Shortlist
    from zoo.inference.keras_translator import BEAM_SEARCH, GREEDY, KerasTranslator
    from zoo.models.workdir import decoding_settings, load_workdir, workdir_shortlist

    model, source_tokenizer, target_tokenizer, config = load_workdir(path)
    table = workdir_shortlist(path, config, shortlist)
    shortlist = None if table is None else Shortlist(table)
    listed = "" if table is None else _describe_shortlist(table.settings())
    settings = dict(
        beam_width=constants.DEFAULT_BEAM_WIDTH,
        length_penalty=constants.DEFAULT_LENGTH_PENALTY,
        coverage_penalty=0.0,
        beam_stopping="exact",
        max_source_length=constants.DEFAULT_MAX_SOURCE_LENGTH,
    )
    settings.update(decoding_settings(config))
    startup.mark("load_workdir", f"Keras, the model code and {constants.BEST_MODEL_FILE} with its tokenizers")
    translator = KerasTranslator(
        model, source_tokenizer, target_tokenizer, max_source_length=settings["max_source_length"],
        max_target_length=settings.get("max_target_length"),
        length_penalty=float(settings["length_penalty"]), coverage_penalty=float(settings["coverage_penalty"]),
        shortlist=shortlist, beam_stopping=settings["beam_stopping"],
    )
    # The export's `beam_search` clamps its beam the same way.
    width = settings["beam_width"] if beam_width is None else min(beam_width, constants.DEFAULT_MAX_BEAM_WIDTH)

    if sampling is not None:
        from zoo.decoding import Sampling, decode

        strategy = Sampling(sampling["temperature"], sampling["top_k"], sampling["seed"])

        def sample(lines):
            result = decode(model, translator.encode(lines), strategy, translator.max_target_length, shortlist)
            return target_tokenizer.decode(result.ids[:, 0, :]).numpy().tolist()

        return sample, f"{path}: {constants.BEST_MODEL_FILE}, sampling ({_describe_sampling(sampling)}){listed}"

    search = GREEDY if width == 1 else BEAM_SEARCH  # as the export's greedy and beam_search signatures

    def translate(lines):
        return translator.decode_batch(lines, width, search=search, alignments=False)[0].tolist()

    if search == GREEDY:
        return translate, f"{path}: {constants.BEST_MODEL_FILE}, greedy{listed}"
    description = (f"{path}: {constants.BEST_MODEL_FILE}, beam search (beam width {width}, "
                   f"length penalty {float(settings['length_penalty'])}){listed}")
    return translate, description
