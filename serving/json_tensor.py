"""TF Serving's JSON predict formats <-> numpy arrays checked against a signature.

Row format: `{"signature_name": S, "instances": [...]}`. Each instance is either an object with
one value per named input, or, when the signature has exactly one input, the bare value. Values
of one input are stacked along a new 0th (batch) dimension, so every input must be batched:
a signature with scalar-only inputs needs the columnar format (those of unknown rank, such as
`beam_search`'s `beam_width`, stack into one value per instance).
Answer: `{"predictions": [...]}`, one object per instance (the bare value if one output).

Columnar format: `{"signature_name": S, "inputs": {name: value, ...}}` (or the bare value when
the signature has one input); each value is the whole tensor. Answer: `{"outputs": {...}}` (the
bare value if one output).

Strings travel as JSON strings (UTF-8); `{"b64": "..."}` carries binary strings both ways.
"""

import base64
import binascii
import dataclasses
import functools
import json
import sys

import numpy as np

from serving.errors import BadRequestError
from serving.json_text import describe, loads, quoted, quoted_list

DEFAULT_SIGNATURE = "serving_default"
MAX_RANK = 32  # nesting allowed for an input of unknown rank (TensorFlow allows 254; ours have 1)
ROW = "row"
COLUMNAR = "columnar"


@dataclasses.dataclass
class PredictRequest:
    """A parsed predict body: which signature, which format, and the raw JSON inputs."""

    signature_name: str
    format: str
    payload: object


def parse_predict_request(body: bytes) -> PredictRequest:
    """Parses and checks the top level of a predict request body; raises BadRequestError."""
    request = loads(body)
    if not isinstance(request, dict):
        raise BadRequestError(f"JSON Value: expected an object at top level, got {describe(request)}")
    unknown = sorted(set(request) - {"signature_name", "instances", "inputs"})
    if unknown:
        raise BadRequestError(
            f'Unexpected key(s) {quoted_list(unknown, 5)} in request; expected "signature_name" and one of '
            '"instances" or "inputs"'
        )
    signature_name = request.get("signature_name", DEFAULT_SIGNATURE)
    if not isinstance(signature_name, str):
        raise BadRequestError(f'"signature_name" must be a string, got {describe(signature_name)}')
    signature_name = signature_name or DEFAULT_SIGNATURE  # TF Serving reads "" as the default too
    if "instances" in request and "inputs" in request:
        raise BadRequestError('Not both "instances" and "inputs" keys may be present in a request')
    if "instances" in request:
        if not isinstance(request["instances"], list) or not request["instances"]:
            raise BadRequestError(f'"instances" must be a non-empty list, got {describe(request["instances"])}')
        return PredictRequest(signature_name, ROW, request["instances"])
    if "inputs" in request:
        return PredictRequest(signature_name, COLUMNAR, request["inputs"])
    raise BadRequestError('Missing "inputs" or "instances" key')


def batch_size(request: PredictRequest):
    """The number of examples a request carries (before conversion), or None if it cannot tell.

    Row format: the number of instances. Columnar: the longest 0th dimension of any input.
    """
    if request.format == ROW:
        return len(request.payload)
    values = request.payload.values() if isinstance(request.payload, dict) else [request.payload]
    lengths = [len(value) for value in values if isinstance(value, list)]
    return max(lengths) if lengths else None


def request_to_arrays(request: PredictRequest, input_specs: dict) -> dict:
    """Converts the request's inputs to numpy arrays of the signature's dtypes and shapes.

    Args:
        request: from `parse_predict_request`.
        input_specs: input name -> `tf.TensorSpec` of the signature.

    Returns:
        input name -> array (`object` arrays of `bytes` for strings).
    """
    if request.format == ROW:
        named = _row_inputs(request.payload, input_specs)
    else:
        named = _columnar_inputs(request.payload, input_specs)
    arrays = {}
    for name in sorted(input_specs):  # sorted: the first bad input named is the same every time
        spec = input_specs[name]
        # One level of slack lets the shape check below name the mismatch; deeper is refused at once.
        array = _to_array(named[name], spec.dtype, name, None if spec.shape.rank is None else spec.shape.rank + 1)
        if not spec.shape.is_compatible_with(array.shape):
            hint = ""
            if request.format == ROW and spec.shape.rank == 0:
                hint = '; scalar inputs cannot be sent in row format ("instances"), use columnar "inputs"'
            raise BadRequestError(
                f"Input {quoted(name)} has shape {list(array.shape)}, expected {_shape_text(spec.shape)}{hint}"
            )
        arrays[name] = array
    return arrays


def arrays_to_response(outputs: dict, request_format: str) -> dict:
    """Builds the JSON answer (`predictions` for row format, `outputs` for columnar)."""
    if request_format == COLUMNAR:
        values = {name: _to_json(array) for name, array in outputs.items()}
        return {"outputs": next(iter(values.values())) if len(values) == 1 else values}
    sizes = {name: (array.shape[0] if array.ndim else None) for name, array in outputs.items()}
    if len(set(sizes.values())) != 1 or None in sizes.values():
        raise BadRequestError(
            f"Row format needs every output batched with one 0th dimension, got sizes {json.dumps(sizes)}; "
            'use the columnar format ("inputs")'
        )
    batch_size = next(iter(sizes.values()))
    converted = {name: _to_json(array) for name, array in outputs.items()}
    if len(converted) == 1:
        return {"predictions": next(iter(converted.values()))}
    return {"predictions": [{name: values[i] for name, values in converted.items()} for i in range(batch_size)]}


def _mismatch(names: list, given) -> str:
    """The signature's inputs absent from `given` and `given`'s names the signature lacks, in words ("" if none)."""
    missing, extra = sorted(set(names) - set(given)), sorted(set(given) - set(names))
    parts = [f"missing input(s) {quoted_list(missing)}"] if missing else []
    if extra:
        parts.append(f"unknown input(s) {quoted_list(extra, 5)}")
    return ", ".join(parts)


def _row_inputs(instances: list, input_specs: dict) -> dict:
    """Instances -> input name -> list of per-instance values."""
    names = sorted(input_specs)
    columns = {name: [] for name in names}
    objects = _is_object(instances[0])  # as TF Serving: every instance an object, or none of them
    for index, instance in enumerate(instances):
        if _is_object(instance) != objects:
            raise BadRequestError(
                f'Failed to process element: {index} of "instances" list: expected '
                f'{"an object" if objects else "a bare value"} like element 0, got {describe(instance)}; '
                "instances are all objects with named inputs or all bare values"
            )
        if objects:
            mismatch = _mismatch(names, instance)
            if mismatch:
                raise BadRequestError(
                    f'Failed to process element: {index} of "instances" list: {mismatch}; '
                    f"the signature's inputs are {quoted_list(names)}"
                )
            for name in names:
                columns[name].append(instance[name])
        elif len(names) == 1:
            columns[names[0]].append(instance)
        else:
            raise BadRequestError(
                f'Failed to process element: {index} of "instances" list: got a bare value, but the '
                f"signature has {len(names)} inputs {quoted_list(names)}; send objects with named inputs"
            )
    return columns


def _columnar_inputs(inputs, input_specs: dict) -> dict:
    names = sorted(input_specs)
    if _is_object(inputs):
        mismatch = _mismatch(names, inputs)
        if mismatch:
            raise BadRequestError(f'"inputs" has {mismatch}; ' f"the signature's inputs are {quoted_list(names)}")
        return inputs
    if len(names) != 1:
        raise BadRequestError(
            f'"inputs" is a bare value, but the signature has {len(names)} inputs {quoted_list(names)}; '
            "send an object with named inputs"
        )
    return {names[0]: inputs}


def _to_array(value, dtype, name: str, max_rank) -> np.ndarray:
    """Nested JSON lists -> numpy array of `dtype` (a tf.DType), checking rectangularity and types."""
    shape, leaves = _flatten(value, name, MAX_RANK if max_rank is None else max_rank)
    if dtype.name == "string":
        converted = [_to_bytes(leaf, name) for leaf in leaves]
        array = np.empty(len(converted), dtype=object)
        array[:] = converted
        return array.reshape(shape)
    numpy_dtype = np.dtype(dtype.as_numpy_dtype)
    for leaf in leaves:
        _check_number(leaf, numpy_dtype, name)
    if numpy_dtype.kind in "iu":
        info = np.iinfo(numpy_dtype)
        bad = [leaf for leaf in leaves if not info.min <= leaf <= info.max]
        if bad:
            raise BadRequestError(f"Input {quoted(name)}: {describe(bad[0])} is out of range for {dtype.name}")
    elif numpy_dtype.kind == "f":
        # As TF Serving (its JSON parser reads numbers as doubles, then casts): a number past the dtype's largest
        # becomes +-infinity; an integer no double holds is refused, as its parser refuses it.
        bad = [leaf for leaf in leaves if isinstance(leaf, int) and abs(leaf) > sys.float_info.max]
        if bad:
            raise BadRequestError(f"Input {quoted(name)}: {describe(bad[0])} is out of range for {dtype.name}")
        with np.errstate(over="ignore"):
            return np.array([float(leaf) for leaf in leaves], dtype=numpy_dtype).reshape(shape)
    return np.array(leaves, dtype=numpy_dtype).reshape(shape)


def _flatten(value, name: str, max_rank: int):
    """Nested lists -> (shape, flat list of leaves); raises on ragged or too deep nesting."""
    if not isinstance(value, list):
        return (), [value]
    if max_rank < 1:
        raise BadRequestError(f"Input {quoted(name)} is nested deeper than its shape allows; got a list where a value belongs")
    if not value:
        return (0,), []
    parts = [_flatten(item, name, max_rank - 1) for item in value]
    inner = parts[0][0]
    for shape, _ in parts:
        if shape != inner:
            raise BadRequestError(
                f"Input {quoted(name)} is ragged: found elements of shapes {list(inner)} and {list(shape)}; "
                "expected a rectangular nested list"
            )
    return (len(value),) + inner, [leaf for _, leaves in parts for leaf in leaves]


def _is_object(instance) -> bool:
    """An instance of named inputs (a JSON object other than `{"b64": ...}`)."""
    return isinstance(instance, dict) and not _is_b64(instance)


def _is_b64(value) -> bool:
    return isinstance(value, dict) and len(value) == 1 and "b64" in value


def _to_bytes(leaf, name: str) -> bytes:
    if isinstance(leaf, str):
        try:
            return leaf.encode("utf-8")
        except UnicodeEncodeError:  # JSON's "\ud800" escapes parse to lone surrogates, which are no text
            raise BadRequestError(f"Input {quoted(name)}: a string is not valid Unicode (a lone surrogate)") from None
    if _is_b64(leaf) and isinstance(leaf["b64"], str):
        # As TF Serving (abseil's Base64Unescape): whitespace skipped, the closing "=" optional.
        text = "".join(leaf["b64"].split())
        try:
            return base64.b64decode(text + "=" * (-len(text) % 4 if len(text) % 4 != 1 else 0), validate=True)
        except binascii.Error as error:
            raise BadRequestError(f'Input {quoted(name)}: invalid base64 in {{"b64": ...}}: {error}') from None
    raise BadRequestError(f"Input {quoted(name)} expects strings (DT_STRING), got {describe(leaf)}")


def _check_number(leaf, numpy_dtype: np.dtype, name: str):
    if numpy_dtype.kind == "b":
        ok = isinstance(leaf, bool)
    elif numpy_dtype.kind in "iu":
        ok = isinstance(leaf, int) and not isinstance(leaf, bool)
    else:
        ok = isinstance(leaf, (int, float)) and not isinstance(leaf, bool)
    if not ok:
        raise BadRequestError(f"Input {quoted(name)} expects {numpy_dtype.name} values, got {describe(leaf)}")


def _shape_text(shape) -> str:
    if shape.rank is None:
        return "any shape"
    return "[" + ", ".join("-1" if d is None else str(d) for d in shape.as_list()) + "]"


def _to_json(array: np.ndarray):
    """numpy array -> nested JSON values; strings decoded as UTF-8, else sent as {"b64": ...}."""
    if array.dtype == object or array.dtype.kind == "S":
        return _map_nested(_bytes_to_json, array.tolist())
    if array.dtype in (np.float32, np.float16):
        return _map_nested(functools.partial(_float_text, kind=array.dtype.type), array.tolist())
    return array.tolist()


def _float_text(value, kind):
    """A float32 (or float16) as TF Serving writes it: six significant digits when they read back as the
    same value (0.1, not 0.100000001), else nine, which always do."""
    short = float(f"{value:.6g}")
    return short if kind(short) == kind(value) else float(f"{value:.9g}")


def _bytes_to_json(value: bytes):
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(value).decode("ascii")}


def _map_nested(fn, value):
    if isinstance(value, list):
        return [_map_nested(fn, item) for item in value]
    return fn(value)
