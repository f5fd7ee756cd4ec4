"""Facts shared by the whole zoo, each defined once: reserved ids, decoding defaults, file names.

Standard library only (no TensorFlow, no Keras), so that `serving/` and the start-up path of
`zoo-translate` can import it for free.
"""

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
DEFAULT_LENGTH_PENALTY = 0.6  # GNMT length penalty alpha (Wu et al., 2016)
DEFAULT_MAX_SOURCE_LENGTH = 200  # tokens; when neither the caller nor the training config gives one
DEFAULT_MAX_BEAM_WIDTH = 64  # the export clamps beam_width to this (a memory bound)

# The SavedModel layout (TF Serving's): <base_path>/<version>/saved_model.pb.
SAVED_MODEL_FILE = "saved_model.pb"
ASSETS_EXTRA_DIR = "assets.extra"
SETTINGS_FILE = "zoo_export.json"  # in assets.extra/: the defaults baked into an export
WARMUP_FILE = "tf_serving_warmup_requests"  # in assets.extra/: TF Serving's warmup records

# A training workdir's files (docs/interfaces.md, "A training workdir").
CONFIG_FILE = "config.json"
BEST_MODEL_FILE = "best.keras"
RESULTS_FILE = "results.json"
EXPORT_DIR = "export"
ATTENTION_PLOT_FILE = "attention.png"  # attention heatmap of a dev sentence
CURVES_PLOT_FILE = "curves.png"  # training loss and dev scores against the step

_VERSION_DIR = re.compile(r"[0-9]+")


def saved_model_versions(base_path):
    """Sorted int versions under `base_path` that are complete SavedModels ([] if none).

    A version is a directory named by digits only that holds `saved_model.pb`; an export
    being written (a hidden temporary directory) or a half-copied one is not listed.
    """
    if not os.path.isdir(base_path):
        return []
    return sorted(
        int(name)
        for name in os.listdir(base_path)
        if _VERSION_DIR.fullmatch(name) and os.path.isfile(os.path.join(base_path, name, SAVED_MODEL_FILE))
    )
