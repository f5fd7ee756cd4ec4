"""JSON text <-> Python values for `zoo-serve`, with plain messages for every way it can fail.

Error messages describe a received value in words (`describe`), never with a Python repr: a
client learns what was wrong without seeing the server's internals. Names (signatures, inputs,
keys) are JSON strings in them, lists of names JSON lists: `Input "source"`, `["source", "target"]`.
"""

import json

from serving.errors import BadRequestError


def loads(body: bytes):
    """UTF-8 JSON -> Python values; every way it can fail is a BadRequestError with a plain message."""
    try:
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise BadRequestError(f"JSON Parse error: byte {error.start} is not UTF-8; expected a UTF-8 JSON object") from None
    except json.JSONDecodeError as error:
        raise BadRequestError(
            f"JSON Parse error: {error.msg} at line {error.lineno} column {error.colno}; expected a JSON object"
        ) from None
    except RecursionError:
        raise BadRequestError("JSON Parse error: the document is nested too deeply; expected a JSON object") from None
    except ValueError:  # Python refuses integers of more than 4300 digits.
        raise BadRequestError("JSON Parse error: a number has too many digits; expected numbers that fit the inputs") from None


def describe(value) -> str:
    """A short, plain description of a JSON value for error messages (never a Python repr)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        digits = str(abs(value))
        return f"the integer {value}" if len(digits) <= 20 else f"an integer of {len(digits)} digits"
    if isinstance(value, float):
        return f"the number {json.dumps(value)}"
    if isinstance(value, str):
        return f"the string {quoted(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)} element(s)"
    if isinstance(value, dict):
        return f"an object with {len(value)} key(s)"
    return f"a value of type {type(value).__name__}"


def quoted(name: str, limit: int = 40) -> str:
    """A name for an error message, as a JSON string: `"source"`; past `limit` characters cut, `"sss..."`."""
    return json.dumps(name if len(name) <= limit else name[:limit] + "...", ensure_ascii=False)


def quoted_list(names, most: int = 10) -> str:
    """Names for an error message, as a JSON list: `["source", "target"]`; past `most`, `[...] and 3 more`."""
    names = list(names)
    shown = "[" + ", ".join(quoted(name) for name in names[:most]) + "]"
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def dumps(content) -> bytes:
    """A JSON answer as UTF-8 bytes: text as is (a lone surrogate echoed from a request as "?"), NaN and
    Infinity as TF Serving writes them."""
    return json.dumps(content, ensure_ascii=False, allow_nan=True, separators=(",", ":")).encode("utf-8", "replace")
