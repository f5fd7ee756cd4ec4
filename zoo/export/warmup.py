"""TF Serving warmup requests: `assets.extra/tf_serving_warmup_requests`.

TF Serving replays the records of this file against a model version before it marks it
AVAILABLE, so the graph's first (slow) run happens at load time, not on a user's request.
The file is a TFRecord of `tensorflow.serving.PredictionLog` protos. The
`tensorflow-serving-api` package that defines them requires the newest TensorFlow, so
the zoo writes them with the protobuf wire format directly: the tensors are TensorFlow's
own `TensorProto`s, and only the three small wrapper messages are encoded here, with the
field numbers of `tensorflow_serving/apis/{prediction_log,predict,model}.proto`:

    PredictionLog { PredictLog predict_log = 6; }
    PredictLog    { PredictRequest request = 1; }
    PredictRequest{ ModelSpec model_spec = 1; map<string, TensorProto> inputs = 2; }
    ModelSpec     { string name = 1; string signature_name = 3; }

The requests come from the signature table (`zoo.export.signatures.SIGNATURES`): every
signature's own warmup inputs, checked against its input specs, so each signature of an
export is warmed up. `read_warmup_requests` parses the file back (tests, and any server
that wants to replay it).
"""

import os

import numpy as np
import tensorflow as tf

from zoo import constants
from zoo.export.signatures import SIGNATURES

_LENGTH_DELIMITED = 2
_PREDICTION_LOG_PREDICT_LOG = 6
_PREDICT_LOG_REQUEST = 1
_REQUEST_MODEL_SPEC = 1
_REQUEST_INPUTS = 2
_MODEL_SPEC_NAME = 1
_MODEL_SPEC_SIGNATURE_NAME = 3
_MAP_KEY = 1
_MAP_VALUE = 2


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field (message, string or bytes): key, length, payload."""
    return _varint((number << 3) | _LENGTH_DELIMITED) + _varint(len(payload)) + payload


def encode_prediction_log(signature_name, inputs, model_name=""):
    """Serializes `PredictionLog{predict_log{request{model_spec, inputs}}}`.

    Args:
      signature_name: the signature the request calls.
      inputs: `{input name: numpy array or scalar}`; strings as bytes or str.
      model_name: `model_spec.name`; TF Serving's warmup ignores it, so it may be empty.

    Returns:
      bytes: one serialized PredictionLog.
    """
    model_spec = _field(_MODEL_SPEC_SIGNATURE_NAME, signature_name.encode("utf-8"))
    if model_name:
        model_spec = _field(_MODEL_SPEC_NAME, model_name.encode("utf-8")) + model_spec
    request = _field(_REQUEST_MODEL_SPEC, model_spec)
    for key in sorted(inputs):
        tensor = tf.make_tensor_proto(_as_array(inputs[key])).SerializeToString()
        entry = _field(_MAP_KEY, key.encode("utf-8")) + _field(_MAP_VALUE, tensor)
        request += _field(_REQUEST_INPUTS, entry)
    return _field(_PREDICTION_LOG_PREDICT_LOG, _field(_PREDICT_LOG_REQUEST, request))


def _as_array(value):
    if isinstance(value, (list, tuple)):
        return np.array([v.encode("utf-8") if isinstance(v, str) else v for v in value], dtype=object)
    return np.asarray(value)


def _read_varint(data, position):
    value = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("truncated varint in a warmup record")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position


def _fields(data):
    """Yields `(field number, payload)` of the length-delimited fields of a message."""
    position = 0
    while position < len(data):
        key, position = _read_varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, position = _read_varint(data, position)
            continue
        if wire_type != _LENGTH_DELIMITED:
            raise ValueError(f"unexpected wire type {wire_type} for field {number} in a warmup record")
        length, position = _read_varint(data, position)
        if position + length > len(data):
            raise ValueError(f"field {number} runs past the end of a warmup record")
        yield number, data[position : position + length]
        position += length


def decode_prediction_log(record):
    """Parses what `encode_prediction_log` wrote: `(signature_name, {name: numpy array})`."""
    request = b""
    for number, payload in _fields(record):
        if number == _PREDICTION_LOG_PREDICT_LOG:
            request = dict(_fields(payload)).get(_PREDICT_LOG_REQUEST, b"")
    signature_name, inputs = "", {}
    for number, payload in _fields(request):
        if number == _REQUEST_MODEL_SPEC:
            spec = dict(_fields(payload))
            signature_name = spec.get(_MODEL_SPEC_SIGNATURE_NAME, b"").decode("utf-8")
        elif number == _REQUEST_INPUTS:
            entry = dict(_fields(payload))
            proto = tf.make_tensor_proto(0)
            proto.ParseFromString(entry.get(_MAP_VALUE, b""))
            inputs[entry.get(_MAP_KEY, b"").decode("utf-8")] = tf.make_ndarray(proto)
    return signature_name, inputs


def sources_from_vocabulary(tokenizer, lengths=(3, 12)):
    """Warmup sentences made of the most frequent tokens: one per length, plus "".

    Args:
      tokenizer: a `zoo.data` tokenizer.
      lengths: number of tokens of each sentence.

    Returns:
      list of str.
    """
    first = constants.FIRST_REGULAR_ID
    sources = [""]
    for length in lengths:
        ids = [first + i % max(tokenizer.vocab_size - first, 1) for i in range(length)]
        text = tokenizer.decode(tf.constant([ids], tf.int32))[0].numpy().decode("utf-8")
        sources.append(text)
    return sources


def warmup_requests(sources, defaults):
    """`(signature_name, inputs)` pairs: the warmup inputs of every signature of `SIGNATURES`.

    Args:
      sources: a few source sentences (list of str).
      defaults: the export's defaults (`ServingModule.settings()`).

    Raises:
      ValueError: a signature's warmup inputs do not match its input specs (names,
        dtypes, shapes).
    """
    sources = list(sources)
    requests = []
    for spec in SIGNATURES.values():
        examples = spec.warmup(sources, defaults)
        if not examples:
            raise ValueError(f"signature {spec.name!r}: expected at least one warmup request, received none")
        for inputs in examples:
            _check_inputs(spec, inputs)
            requests.append((spec.name, inputs))
    return requests


def _check_inputs(spec, inputs):
    """Raises ValueError unless `inputs` are exactly what the signature `spec` takes."""
    if sorted(inputs) != sorted(spec.input_names):
        raise ValueError(
            f"signature {spec.name!r}: warmup inputs {sorted(inputs)} do not match its inputs "
            f"{sorted(spec.input_names)}"
        )
    for tensor_spec in spec.inputs:
        proto = tf.make_tensor_proto(_as_array(inputs[tensor_spec.name]))
        dtype, shape = tf.as_dtype(proto.dtype), tf.TensorShape(proto.tensor_shape)
        if dtype != tensor_spec.dtype or not tensor_spec.shape.is_compatible_with(shape):
            raise ValueError(
                f"signature {spec.name!r}: warmup input {tensor_spec.name!r} is {dtype.name} {shape}, "
                f"expected {tensor_spec.dtype.name} {tensor_spec.shape}"
            )


def write_warmup_requests(saved_model_dir, sources, defaults, model_name=""):
    """Writes `saved_model_dir/assets.extra/tf_serving_warmup_requests`; returns its path.

    Args:
      saved_model_dir: the export's version directory.
      sources: a few source sentences (list of str), at least one.
      defaults: the export's defaults (`ServingModule.settings()`).
      model_name: `model_spec.name` of the requests.
    """
    if not sources:
        raise ValueError("write_warmup_requests: expected at least one warmup source, received none")
    extra_dir = os.path.join(saved_model_dir, constants.ASSETS_EXTRA_DIR)
    os.makedirs(extra_dir, exist_ok=True)
    path = os.path.join(extra_dir, constants.WARMUP_FILE)
    with tf.io.TFRecordWriter(path) as writer:
        for signature_name, inputs in warmup_requests(sources, defaults):
            writer.write(encode_prediction_log(signature_name, inputs, model_name))
    return path


def read_warmup_requests(path):
    """The `(signature_name, {name: numpy array})` of every record of a warmup file."""
    return [decode_prediction_log(record.numpy()) for record in tf.data.TFRecordDataset(path)]
