"""Facts shared by the whole zoo, each defined once: reserved ids, decoding defaults, file names.

Standard library only (no TensorFlow, no Keras), so that `serving/` and the start-up path of
`zoo-translate` can import it for free; that is also why the reading of an export's
`zoo_export.json` and the loading of the op libraries it names live here.
"""

import glob
import importlib
import importlib.util
import json
import os
import re

# Reserved token ids, the same in every vocabulary, source and target (docs/interfaces.md).
PAD_ID = 0  # padding; masked out of attention and of the loss
UNK_ID = 1  # unknown token
BOS_ID = 2  # start of sequence: the first decoder input
EOS_ID = 3  # end of sequence: the last decoder target

PAD = "<pad>"
UNK = "<unk>"
BOS = "<s>"
EOS = "</s>"

RESERVED_TOKENS = (PAD, UNK, BOS, EOS)
FIRST_REGULAR_ID = len(RESERVED_TOKENS)  # the first id of a real token

# Decoding defaults: what a search uses when neither the caller nor the export says otherwise.
DEFAULT_BEAM_WIDTH = 5
BEAM_STOPPING = ("exact", "approximate")  # the stopping rules of beam search (docs/decoding.md)
DEFAULT_LENGTH_PENALTY = 0.6  # GNMT length penalty alpha (Wu et al., 2016)
# |alpha| past this makes lp(t) ** alpha overflow float32 at a few dozen tokens (((5 + 81) / 6) ** 40 ~ 1e46):
# every score would read 0 or -inf and the ranking would be arbitrary; the literature uses 0-2.
MAX_LENGTH_PENALTY = 10.0
INT32_MAX = 2**31 - 1  # the searches and the export's signatures count in int32: a larger integer would wrap
FLOAT32_MAX = 3.4028234663852886e38  # numpy.finfo(numpy.float32).max: a larger double is inf to a float32 tensor
DEFAULT_MAX_SOURCE_LENGTH = 200  # source tokens a translation reads (more when training read more)
DEFAULT_MAX_BEAM_WIDTH = 64  # the export clamps beam_width to this (a memory bound)

# Training choices, named here so that a command can check its flags before TensorFlow loads.
STRATEGIES = ("auto", "one_device", "mirrored", "multi_worker", "tpu")  # zoo.training.distribute
PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")  # zoo.training.precision
ENCODER_IMPLEMENTATIONS = ("zoo", "keras")  # the zoo's own cells in one loop, or Keras' LSTM/GRU layers (cuDNN)
CPU_REPLICA_STRATEGIES = ("auto", "mirrored")  # those under which `cpu_replicas` >= 2 splits the CPU
SWITCH_VALUES = ("auto", "true", "false")  # of the jit_compile, static_shapes and stream_train fields
PRESET_NAMES = ("rnnenc", "bahdanau", "luong_dot", "luong_general", "luong_concat", "reduced_rank")  # zoo.models
RNN_CELLS = ("lstm", "gru")  # zoo.models.recurrent_cells
# The attention scores zoo.layers registers, canonical names then aliases (zoo.layers.names(), aliases()).
ATTENTION_SCORES = ("additive", "concat", "dot", "general", "reduced_rank")
ATTENTION_ALIASES = {"bahdanau": "additive", "multiplicative": "general"}
TOKENIZER_TYPES = ("char", "word", "sentencepiece")  # the built-in kinds of zoo.data.tokenizer_kinds
SPM_MODEL_TYPES = ("unigram", "bpe")  # zoo.data.sentencepiece_model
# SentencePiece's built-in normalization rules (the rule travels inside the model file), and
# "nfc", which SentencePiece lacks (zoo.data.sentencepiece_model says how the zoo runs it).
SPM_NORMALIZATIONS = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity", "nfc")
SPM_BYTE_PIECES = 256  # pieces SentencePiece's byte fallback adds, one per byte value
STREAM_SAMPLE_SIZE = 300_000  # pairs a streamed training file gives the vocabulary (zoo.data.tsv_stream)

# The SavedModel layout (TF Serving's): <base_path>/<version>/saved_model.pb.
SAVED_MODEL_FILE = "saved_model.pb"
ASSETS_EXTRA_DIR = "assets.extra"
SETTINGS_FILE = "zoo_export.json"  # in assets.extra/: the defaults baked into an export
BLEU_TOKENIZE = "bleu_tokenize"  # the zoo_export.json key: the sacreBLEU tokenizer the training scored with
WARMUP_FILE = "tf_serving_warmup_requests"  # in assets.extra/: TF Serving's warmup records

# A training workdir's files (docs/interfaces.md, "A training workdir").
CONFIG_FILE = "config.json"
BEST_MODEL_FILE = "best.keras"
RESULTS_FILE = "results.json"
EVALUATIONS_FILE = "evaluations.json"  # every dev evaluation of every run of the workdir, in step order
EXPORT_DIR = "export"
ATTENTION_PLOT_FILE = "attention.png"  # attention heatmap of a dev sentence
CURVES_PLOT_FILE = "curves.png"  # training loss and dev scores against the step
VOCAB_DIR = "vocab"  # the tokenizers (vocab/source/, vocab/target/) and the shortlist table
SHORTLIST_FILE = "shortlist.npz"  # in vocab/: the vocabulary selection table (zoo.data.shortlist)

_VERSION_DIR = re.compile(r"[0-9]+")


def saved_model_versions(base_path):
    """Sorted int versions under `base_path` that are complete SavedModels ([] if none).

    A version is a directory named by digits only that holds `saved_model.pb`; an export
    being written (a hidden temporary directory) or a half-copied one is not listed.
    """
    return sorted(version_directories(base_path))


def version_path(base_path, version):
    """The directory of `version` under `base_path`: the one named by it, `7` or as TF Serving also reads
    it `007` (the plain spelling where both are there), else `base_path/<version>` (not yet written)."""
    return os.path.join(base_path, version_directories(base_path).get(version, str(version)))


def version_directories(base_path):
    """`{version: directory name}` of the complete SavedModels under `base_path`: one listing for a caller
    that needs both the versions and their paths."""
    if not os.path.isdir(base_path):
        return {}
    found = {}
    for name in sorted(os.listdir(base_path)):  # "7" comes after "007": the plain name wins
        if _VERSION_DIR.fullmatch(name) and os.path.isfile(os.path.join(base_path, name, SAVED_MODEL_FILE)):
            found[int(name)] = name
    return found


def read_export_settings(export_dir):
    """The `assets.extra/zoo_export.json` of an export as a dict ({} if it has none).

    Raises:
      ValueError: the file is not a JSON object (the message names it).
    """
    try:
        return read_json_object(os.path.join(export_dir, ASSETS_EXTRA_DIR, SETTINGS_FILE))
    except FileNotFoundError:
        return {}


def read_json_object(path):
    """The JSON object in `path`, a dict; a ValueError naming the file when it is not valid JSON (or
    not UTF-8) or not an object: a file damaged by hand, a full disk or another tool."""
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except ValueError as error:  # UnicodeDecodeError included
        raise ValueError(f"{path}: invalid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


# -- Op libraries: the custom ops an export's graph runs besides TensorFlow's own ------------

OP_LIBRARIES = "op_libraries"  # the zoo_export.json field listing them ([] for core TF ops only)
OP_LIBRARY_FILES = "op_library_files"  # and the one naming the files of each whose ops the graph runs
# What installs each one (`{tf}`: TensorFlow's release series, which tensorflow-text must match).
_OP_LIBRARY_PACKAGES = {"tensorflow_text": "tensorflow-text~={tf}"}
_KERNELS_DIR = ("python", "ops")  # where in the package its kernels (shared objects) lie


class MissingOpLibraryError(ImportError):
    """An op library an export or tokenizer needs does not load; the one-line message says what to install."""


def op_library_install_hint(library, tf_version):
    """`pip install 'tensorflow-text~=2.21.0'` for `("tensorflow_text", "2.21.3")`."""
    series = ".".join(str(tf_version).split(".")[:2]) + ".0"
    package = _OP_LIBRARY_PACKAGES.get(library, library.replace("_", "-"))
    return f"pip install '{package.format(tf=series)}'"


def load_op_libraries(tf, libraries, files=None):
    """Registers the ops of each named library with TensorFlow, before loading an export that runs them.

    The kernels are loaded from the package's shared objects with `tf.load_op_library` (what
    TF Serving links in), without importing its Python package: `tensorflow_text` would import
    Keras, which an export does not need. A package without them there is imported instead.

    Args:
      tf: the `tensorflow` module (this module imports no TensorFlow).
      libraries: Python module names, as `zoo_export.json` lists them.
      files: None, or `{library: [file names]}` (`zoo_export.json`'s `op_library_files`): only
        those of the library's shared objects are loaded (a SentencePiece export needs one of
        tensorflow_text's 22); a library it does not list, or whose listed files are not all
        there (another release), has all of its own loaded.

    Raises:
      MissingOpLibraryError: one line naming the library and the package to install.
    """
    for library in libraries:
        try:
            kernels = _kernel_paths(library)
            wanted = set((files or {}).get(library) or ())
            if wanted and wanted <= {os.path.basename(path) for path in kernels}:
                kernels = [path for path in kernels if os.path.basename(path) in wanted]
            for path in kernels:
                tf.load_op_library(path)
            if not kernels:
                importlib.import_module(library)
        except Exception as error:  # ImportError, or kernels built for another TensorFlow
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise MissingOpLibraryError(
                f"this export runs ops of {library}, which do not load ({reason}); install them with: "
                f"{op_library_install_hint(library, tf.__version__)}"
            ) from None


def load_export_op_libraries(tf, settings):
    """`load_op_libraries` with what an export's `zoo_export.json` (`settings`) lists: its
    `op_libraries`, and of each only its `op_library_files` (all of them for an export without)."""
    load_op_libraries(tf, settings.get(OP_LIBRARIES, []), settings.get(OP_LIBRARY_FILES))


def op_library_files(tf, libraries, op_names):
    """`{library: [file names]}`: the shared objects of each library that define any of `op_names`
    (the op types of an export's graph), for `load_op_libraries(..., files=)`.

    A library none of whose files defines one of them is left out (then all of its files load).
    """
    found = {}
    for library in libraries:
        names = []
        for path in _kernel_paths(library):
            module = tf.load_op_library(path)  # already loaded by the tokenizer's import: only its wrappers are remade
            # The module's op wrappers are named like the ops (`SentencepieceOp`); skip its imports (`Any`).
            if any(getattr(getattr(module, op, None), "__module__", None) == module.__name__ for op in op_names):
                names.append(os.path.basename(path))
        if names:
            found[library] = names
    return found


def _kernel_paths(library):
    """The sorted paths of the shared objects in `<library>/python/ops`; ImportError if it is not installed."""
    spec = importlib.util.find_spec(library)
    if spec is None:
        raise ImportError(f"No module named {library!r}")
    return sorted(
        path
        for location in spec.submodule_search_locations or ()
        for path in glob.glob(os.path.join(location, *_KERNELS_DIR, "*.so"))
    )
