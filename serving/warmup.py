"""Reads and replays `assets.extra/tf_serving_warmup_requests`, without `tensorflow-serving-api`.

The file is a TFRecord whose records are `tensorflow.serving.PredictionLog` protos. Only the
wrappers around the tensors are TF Serving's; the tensors are TensorFlow's own `TensorProto`.
So the wrappers are declared here, in a private descriptor pool, with the field numbers of
`tensorflow_serving/apis/{prediction_log,predict,model}.proto`:

    PredictionLog  { PredictLog predict_log = 6; }              (other log kinds: skipped)
    PredictLog     { PredictRequest request = 1; }
    PredictRequest { ModelSpec model_spec = 1; map<string, TensorProto> inputs = 2; }
    ModelSpec      { string name = 1; string signature_name = 3; }

A map is a repeated entry message `{key = 1; value = 2}` on the wire, and a message field is
read like a bytes field, so `inputs` is declared as repeated `{string key; bytes value}` and each
value is parsed with TensorFlow's `tensor_pb2.TensorProto`. Fields not declared here (a model
version, an output filter) are skipped by the parser, as any protobuf parser does.
"""

import logging
import os

import tensorflow as tf
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorflow.core.framework import tensor_pb2

from serving.json_text import quoted, quoted_list
from zoo.constants import ASSETS_EXTRA_DIR, WARMUP_FILE

_PACKAGE = "zoo_serving.warmup"
_DEFAULT_SIGNATURE = "serving_default"


def _message_classes() -> dict:
    """Builds the four wrapper messages; returns name -> message class."""
    field = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="zoo_serving_warmup.proto", package=_PACKAGE, syntax="proto3")
    layout = {
        "PredictionLog": [("predict_log", 6, field.TYPE_MESSAGE, "PredictLog", field.LABEL_OPTIONAL)],
        "PredictLog": [("request", 1, field.TYPE_MESSAGE, "PredictRequest", field.LABEL_OPTIONAL)],
        "PredictRequest": [
            ("model_spec", 1, field.TYPE_MESSAGE, "ModelSpec", field.LABEL_OPTIONAL),
            ("inputs", 2, field.TYPE_MESSAGE, "Input", field.LABEL_REPEATED),
        ],
        "Input": [
            ("key", 1, field.TYPE_STRING, None, field.LABEL_OPTIONAL),
            ("value", 2, field.TYPE_BYTES, None, field.LABEL_OPTIONAL),
        ],
        "ModelSpec": [
            ("name", 1, field.TYPE_STRING, None, field.LABEL_OPTIONAL),
            ("signature_name", 3, field.TYPE_STRING, None, field.LABEL_OPTIONAL),
        ],
    }
    for message_name, fields in layout.items():
        message = file.message_type.add(name=message_name)
        for name, number, kind, type_name, label in fields:
            message.field.add(
                name=name,
                number=number,
                type=kind,
                label=label,
                type_name=f".{_PACKAGE}.{type_name}" if type_name else None,
            )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")) for name in layout
    }


MESSAGES = _message_classes()


def decode_prediction_log(record: bytes):
    """One serialized PredictionLog -> `(signature_name, {input name: numpy array})`.

    Returns None for a record that holds another kind of log (classify, regress, ...).
    """
    log = MESSAGES["PredictionLog"].FromString(record)
    if not log.HasField("predict_log"):
        return None
    request = log.predict_log.request
    inputs = {}
    for entry in request.inputs:
        inputs[entry.key] = tf.make_ndarray(tensor_pb2.TensorProto.FromString(entry.value))
    return request.model_spec.signature_name or _DEFAULT_SIGNATURE, inputs


def read_warmup_requests(path: str) -> list:
    """The `(signature_name, {input name: numpy array})` of every predict record of `path`."""
    requests = []
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
        decoded = decode_prediction_log(record)
        if decoded is not None:
            requests.append(decoded)
    return requests


def warmup_file(version_dir: str) -> str:
    """Where a SavedModel version directory keeps its warmup requests."""
    return os.path.join(version_dir, ASSETS_EXTRA_DIR, WARMUP_FILE)


def replay_warmup_requests(model) -> int:
    """Runs the warmup requests of a `LoadedModel` (if its export has any); returns how many.

    Raises:
        ValueError: a request names a signature the model lacks. TensorFlow errors of a
            failing request propagate: as in TF Serving, a failing warmup fails the load.
    """
    path = warmup_file(model.path)
    if not os.path.isfile(path):
        return 0
    requests = read_warmup_requests(path)
    for index, (name, inputs) in enumerate(requests):
        if name not in model.signatures:
            raise ValueError(
                f"Warmup request {index} in {path} asks for signature {quoted(name)}; "
                f"the model has {quoted_list(sorted(model.signatures))}"
            )
        model.signatures[name].function(**{key: tf.constant(value) for key, value in inputs.items()})
    if requests:
        logging.info("Replayed %d warmup request(s) of %s", len(requests), model.path)
    else:  # a file cut short before its first record reads as an empty one: say so, the load goes on
        logging.warning("Warmup file %s holds no predict request (%d bytes); no warmup was run", path,
                        os.path.getsize(path))
    return len(requests)
