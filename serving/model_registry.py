"""Version discovery, loading and hot swapping of the SavedModel that `zoo-serve` serves.

Layout, as TF Serving expects it: `<model_base_path>/<version>/saved_model.pb` with `variables/`
(and optionally `assets/`, `assets.extra/`). Like TF Serving's default version policy ("latest
1"), the registry serves the highest complete version (`zoo.constants.saved_model_versions`: a
directory whose name is an integer, `7` or `007`, and that holds `saved_model.pb`). Anything else (`.tmp-3`,
`3.partial`, a version dir still being copied without its `saved_model.pb`) is ignored, so
exporters should write to a temporary name and rename it into place. A version that fails to
load is remembered with the state of its files and skipped until they change.
"""

import dataclasses
import logging
import os
import threading
from typing import Callable

import tensorflow as tf
from google.protobuf import json_format
from tensorflow.core.protobuf import saved_model_pb2

from serving.errors import NotFoundError
from serving.json_text import quoted
from serving.warmup import replay_warmup_requests
from zoo.constants import (
    SAVED_MODEL_FILE,
    load_export_op_libraries,
    read_export_settings,
    saved_model_versions,
    version_path,
)


@dataclasses.dataclass(eq=False)
class Signature:
    """One callable signature of a loaded SavedModel.

    Attributes:
        name: signature key, e.g. `"serving_default"`.
        function: the concrete function; call it with keyword tensors named as `inputs`.
        inputs: input name -> `tf.TensorSpec` (dtype and shape, `None` for any size).
        outputs: output name -> `tf.TensorSpec`.
    """

    name: str
    function: Callable[..., dict]
    inputs: dict
    outputs: dict


@dataclasses.dataclass(eq=False)
class LoadedModel:
    """One loaded version: its signatures and the signature defs TF Serving's metadata shows."""

    version: int
    path: str
    signatures: dict
    signature_defs: dict
    # Keeps the restored object (and so the variables the functions capture) alive.
    trackable: object = dataclasses.field(repr=False, default=None)


@dataclasses.dataclass
class VersionStatus:
    """A version's entry in the model status answer: LOADING while it loads, AVAILABLE while served, END
    once unloaded or when it failed to load (then `error_code` is not "OK" and `error_message` says why)."""

    version: int
    state: str
    error_message: str = ""
    error_code: str = "OK"


def read_signature_defs(export_dir: str) -> dict:
    """Reads the serving MetaGraph's signature defs from `saved_model.pb` as TF Serving's JSON."""
    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, SAVED_MODEL_FILE), "rb") as f:
        saved_model.ParseFromString(f.read())
    meta_graph = next(
        (g for g in saved_model.meta_graphs if "serve" in g.meta_info_def.tags),
        saved_model.meta_graphs[0],
    )
    signature_defs = {}
    for key, signature_def in meta_graph.signature_def.items():
        try:
            as_dict = json_format.MessageToDict(
                signature_def, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
            )
        except TypeError:  # protobuf < 5 spells the option differently.
            as_dict = json_format.MessageToDict(
                signature_def, preserving_proto_field_name=True, including_default_value_fields=True
            )
        signature_defs[key] = as_dict
    return signature_defs


def load_version(model_base_path: str, version: int) -> LoadedModel:
    """Loads `<model_base_path>/<version>` (its directory as named: `007` for 7) with `tf.saved_model.load` and
    wraps its signatures.

    The op libraries its `assets.extra/zoo_export.json` lists (`tensorflow_text` for a
    SentencePiece export) are loaded first; one that does not load raises
    `MissingOpLibraryError`, whose one-line message names the package to install. Then replays
    the export's warmup requests, as TF Serving does, so that the first real request does not
    pay for one-time initialization; a failing warmup request fails the load.
    """
    path = version_path(model_base_path, version)
    load_export_op_libraries(tf, read_export_settings(path))
    trackable = tf.saved_model.load(path)
    signatures = {}
    for name, function in trackable.signatures.items():
        _, input_specs = function.structured_input_signature
        output_specs = function.structured_outputs
        signatures[name] = Signature(name, function, dict(input_specs), dict(output_specs))
    model = LoadedModel(version, path, signatures, read_signature_defs(path), trackable)
    replay_warmup_requests(model)
    return model


def version_fingerprint(version_dir: str) -> tuple:
    """(relative path, size, mtime) of every file under `version_dir`: changes when any file does."""
    files = []
    for root, _, names in os.walk(version_dir):
        for name in names:
            path = os.path.join(root, name)
            try:
                stat = os.stat(path)
            except OSError:  # Removed while we walk: the next poll sees the new state.
                continue
            files.append((os.path.relpath(path, version_dir), stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(files))


class ModelRegistry:
    """Serves the highest loadable version of one model and swaps in newer ones on `poll()`.

    `get()` hands out the current `LoadedModel`; a request keeps using the object it got even if a
    newer version is swapped in meanwhile (the swap is one reference assignment, so it is atomic).
    A version that fails to load is logged once and not loaded again until one of its files
    changes; meanwhile the highest version below it that loads is served (the one served so far,
    if any). A missing or unreadable base path is logged once, and the served version stays.

    Args:
        model_name: the name clients use in `/v1/models/{name}`.
        model_base_path: directory holding the numeric version directories.
    """

    def __init__(self, model_name: str, model_base_path: str):
        if not os.path.isdir(model_base_path):
            raise FileNotFoundError(
                f"--model_base_path {model_base_path!r} is not a directory; expected a directory "
                "holding numeric version directories such as 1/saved_model.pb"
            )
        self.model_name = model_name
        self.model_base_path = model_base_path
        self._current = None
        self._statuses = {}
        self._broken = {}  # version -> fingerprint of the files that failed to load
        self._base_path_problem = None  # what was last logged about the base path
        self._poll_lock = threading.Lock()

    @property
    def current(self):
        """The served `LoadedModel`, or None while no version has loaded."""
        return self._current

    def poll(self) -> bool:
        """Serves the highest version that loads, if it is not served yet; True if it swapped."""
        with self._poll_lock:
            for version in reversed(self._versions()):
                if self._current is not None and version == self._current.version:
                    return False
                fingerprint = version_fingerprint(version_path(self.model_base_path, version))
                if self._broken.get(version) == fingerprint:
                    continue
                self._set_status(VersionStatus(version, "LOADING"))  # as TF Serving reports a load under way
                try:
                    loaded = load_version(self.model_base_path, version)
                except Exception as error:  # A broken export must not take the server down.
                    self._broken[version] = fingerprint
                    self._set_status(VersionStatus(version, "END", f"{type(error).__name__}: {error}", "UNKNOWN"))
                    logging.error(
                        "Failed to load version %d of model %s from %s; still serving %s. It is tried again "
                        "when its files change. %s: %s",
                        version, self.model_name, self.model_base_path,
                        self._current.version if self._current else "nothing", type(error).__name__, error,
                    )
                    continue
                self._swap_in(loaded)
                return True
            return False

    def _versions(self) -> list:
        """The complete versions under the base path; [] (logged once) while it cannot be read."""
        try:
            if not os.path.isdir(self.model_base_path):
                raise FileNotFoundError("it does not exist or is not a directory")
            versions = saved_model_versions(self.model_base_path)
        except OSError as error:
            problem = getattr(error, "strerror", None) or str(error)
            if problem != self._base_path_problem:
                logging.warning(
                    "Cannot read model base path %s (%s); still serving %s",
                    self.model_base_path, problem, self._current.version if self._current else "nothing",
                )
                self._base_path_problem = problem
            return []
        if self._base_path_problem is not None:
            logging.info("Model base path %s is readable again", self.model_base_path)
            self._base_path_problem = None
        return versions

    def _set_status(self, status: VersionStatus):
        # Requests read these from the event loop thread: replace, never mutate in place.
        self._statuses = {**self._statuses, status.version: status}

    def _swap_in(self, loaded: LoadedModel):
        statuses = dict(self._statuses)
        statuses[loaded.version] = VersionStatus(loaded.version, "AVAILABLE")
        if self._current is not None:
            statuses[self._current.version] = VersionStatus(self._current.version, "END")
        self._current, self._statuses = loaded, statuses
        self._broken.pop(loaded.version, None)
        logging.info("Serving version %d of model %s from %s", loaded.version, self.model_name, loaded.path)

    def statuses(self, model_name: str, version=None) -> list:
        """Version statuses for the status endpoint, newest first; raises NotFoundError."""
        self._check_name(model_name)
        statuses = self._statuses
        if version is None:
            if not statuses:
                raise NotFoundError(f"Could not find any versions of model {model_name}")
            return [statuses[v] for v in sorted(statuses, reverse=True)]
        if version not in statuses:
            raise NotFoundError(f"Could not find version {version} of model {model_name}")
        return [statuses[version]]

    def get(self, model_name: str, version=None) -> LoadedModel:
        """The served model, checked against the requested name and version; raises NotFoundError."""
        self._check_name(model_name)
        current = self._current
        if current is None:
            raise NotFoundError(f"Servable not found for request: Latest({model_name}); no version loaded yet")
        if version is not None and version != current.version:
            raise NotFoundError(f"Servable not found for request: Specific({model_name}, {version})")
        return current

    def _check_name(self, model_name: str):
        if model_name != self.model_name:
            raise NotFoundError(
                f"Servable not found for request: Latest({model_name}); this server serves "
                f"model {quoted(self.model_name)}"
            )
