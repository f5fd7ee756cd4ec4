"""A Python client for translation models behind TF Serving's REST API (TF Serving or `zoo-serve`).

Example:

    from serving.client import TranslationClient

    with TranslationClient("http://localhost:8501", "zoo") as client:
        best = client.translate(["the cat sat"])            # serving_default
        print(best[0].text, best[0].score)
        five = client.translate(["the cat sat"], beam_width=5, n_best=3)  # beam_search
        print([h.text for h in five[0].hypotheses])
        print(client.score(["the cat sat"], [best[0].text]))  # log-probabilities
        drawn = client.sample(["the cat sat"] * 3, temperature=0.8, seed=[1, 2, 3])  # sample
        print([(s.text, s.log_prob) for s in drawn])

Requests use the columnar format (`{"inputs": ...}`), which every signature accepts, including
`beam_search` and `sample` with scalar parameters. Connection errors, timeouts and 5xx answers are retried with
exponential backoff; 4xx answers (our request is wrong) raise `ServingError` at once.
"""

import dataclasses
import json
import math
import numbers
import time
from typing import Optional, Sequence, Union

import httpx

from serving.errors import ServingError
from zoo.constants import DEFAULT_LENGTH_PENALTY

@dataclasses.dataclass(frozen=True)
class Sample:
    """One translation drawn by the `sample` signature and its log-probability (end token included)."""

    text: str
    log_prob: float


# 502/503/504 come from proxies and servers that are (re)starting: worth another try, like 500.
_RETRY_STATUS = frozenset({500, 502, 503, 504})


@dataclasses.dataclass(frozen=True)
class Hypothesis:
    """One candidate translation: its text, ranking `score` and, from beam search, `log_prob`."""

    text: str
    score: float
    log_prob: Optional[float] = None


@dataclasses.dataclass(frozen=True)
class Translation:
    """The translation of one source sentence: the best hypothesis first in `hypotheses`."""

    hypotheses: tuple

    @property
    def text(self) -> str:
        return self.hypotheses[0].text

    @property
    def score(self) -> float:
        return self.hypotheses[0].score


class TranslationClient:
    """Talks to `/v1/models/{model_name}` at `url`.

    Args:
        url: server root, e.g. `"http://localhost:8501"`.
        model_name: the served model's name.
        version: pin a version (`/versions/{version}`); None uses the newest served one.
        timeout: seconds for each HTTP attempt (connect, read and write).
        retries: extra attempts after a connection error, timeout or 5xx answer.
        backoff: seconds before the first retry; doubles for each later one.
        transport: an `httpx` transport, for tests or custom networking.
    """

    def __init__(
        self,
        url: str,
        model_name: str = "zoo",
        version: Optional[int] = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.2,
        transport: Optional[httpx.BaseTransport] = None,
    ):
        if not (retries >= 0 and timeout > 0 and math.isfinite(timeout) and backoff >= 0 and math.isfinite(backoff)):
            raise ValueError(f"Expected retries >= 0, a finite timeout > 0 and a finite backoff >= 0, got "
                             f"retries={retries}, timeout={timeout}, backoff={backoff}")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"Expected the server's URL, e.g. http://localhost:8501, got url={url!r}")
        self.model_name = model_name
        self.retries = retries
        self.backoff = backoff
        prefix = f"/v1/models/{model_name}" + (f"/versions/{version}" if version is not None else "")
        self._prefix = prefix
        self._http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout, transport=transport)

    def translate(
        self,
        texts: Union[str, Sequence[str]],
        beam_width: Optional[int] = None,
        n_best: int = 1,
        length_penalty: float = DEFAULT_LENGTH_PENALTY,
        signature: Optional[str] = None,
    ):
        """Translates `texts`.

        Without `beam_width` and with `n_best=1` this calls `serving_default` (the export's default
        decoding); with `beam_width` or `n_best > 1` it calls `beam_search` with
        `beam_width` (default `max(4, n_best)`), `num_hypotheses=n_best` and `length_penalty`.
        `signature` overrides the choice (`"greedy"`, `"serving_default"` or `"beam_search"`).

        Returns:
            A `Translation` per text (one `Translation` if `texts` is a string), each holding
            `n_best` hypotheses, best first; `.text` and `.score` are the best one's. The export
            clamps the beam to its `max_beam_width` (64 by default), so at most that many come back.
        """
        single = isinstance(texts, str)
        sources = [texts] if single else _texts(texts)
        n_best = _number("n_best", n_best, numbers.Integral)
        beam_width = None if beam_width is None else _number("beam_width", beam_width, numbers.Integral)
        if n_best < 1:
            raise ValueError(f"n_best must be >= 1, got {n_best}")
        if signature is None:
            signature = "beam_search" if beam_width is not None or n_best > 1 else "serving_default"
        if not sources:
            return []
        if signature == "beam_search":
            beam_width = max(4, n_best) if beam_width is None else beam_width
            if beam_width < n_best:
                raise ValueError(f"beam_width must be >= n_best, got beam_width={beam_width}, n_best={n_best}")
            outputs = self.predict(
                "beam_search",
                {
                    "source": sources,
                    "beam_width": int(beam_width),
                    "num_hypotheses": int(n_best),
                    "length_penalty": float(_number("length_penalty", length_penalty)),
                },
            )
            results = [
                Translation(tuple(Hypothesis(t, s, lp) for t, s, lp in zip(texts_i, scores_i, log_probs_i)))
                for texts_i, scores_i, log_probs_i in zip(
                    outputs["translations"], outputs["scores"], outputs["log_probs"]
                )
            ]
        else:
            if n_best != 1:
                raise ValueError(f"Signature {signature!r} gives one hypothesis; got n_best={n_best}")
            if beam_width is not None:
                raise ValueError(f"Signature {signature!r} takes no beam_width; got beam_width={beam_width} "
                                 "(use signature='beam_search', or leave signature out)")
            outputs = self.predict(signature, {"source": sources})
            results = [
                Translation((Hypothesis(t, s),)) for t, s in zip(outputs["translation"], outputs["score"])
            ]
        if len(results) != len(sources):
            raise ServingError(f"Asked for {len(sources)} translations, the server answered {len(results)}", 500)
        return results[0] if single else results

    def score(self, sources: Sequence[str], targets: Sequence[str]) -> list:
        """Log-probabilities (end token included) of each `targets[i]` given `sources[i]`."""
        for name, texts in (("sources", sources), ("targets", targets)):
            if isinstance(texts, str):
                raise TypeError(f"{name} must be a sequence of str, got a str: {texts!r} (wrap it in a list)")
        sources, targets = _texts(sources), _texts(targets)
        if len(sources) != len(targets):
            raise ValueError(f"Expected as many targets as sources, got {len(targets)} and {len(sources)}")
        if not sources:
            return []
        outputs = self.predict("score", {"source": sources, "target": targets})
        return list(outputs["log_prob"] if isinstance(outputs, dict) else outputs)

    def sample(
        self,
        texts: Union[str, Sequence[str]],
        temperature: Union[float, Sequence[float]] = 1.0,
        top_k: Union[int, Sequence[int]] = 0,
        seed: Union[int, Sequence[int]] = 0,
    ):
        """Translations drawn from the model (the `sample` signature), one per text.

        Each parameter is one value for every text or a list of one value per text (to
        draw several samples of one text, repeat it with different seeds). A fixed seed
        reproduces the draws. Returns a `Sample` (`text`, `log_prob`: the model's plain
        log-probability of it) for a str, else a list of them.
        """
        single = isinstance(texts, str)
        sources = [texts] if single else _texts(texts)
        if not sources:
            return []
        inputs = {"source": sources, "temperature": temperature, "top_k": top_k, "seed": seed}
        for name in ("temperature", "top_k", "seed"):
            if isinstance(inputs[name], numbers.Number):
                inputs[name] = _plain(inputs[name])
            elif isinstance(inputs[name], (str, bytes)) or not hasattr(inputs[name], "__iter__"):
                raise TypeError(f"{name} must be a number or a list of one number per text, got {inputs[name]!r}")
            else:
                inputs[name] = [_plain(value) for value in inputs[name]]
                if len(inputs[name]) != len(sources):
                    raise ValueError(f"Expected one {name} or one per text ({len(sources)}), got {len(inputs[name])}")
        outputs = self.predict("sample", inputs)
        if len(outputs["translation"]) != len(sources):
            raise ServingError(
                f"Asked for {len(sources)} samples, the server answered {len(outputs['translation'])}", 500)
        results = [Sample(text, log_prob) for text, log_prob in zip(outputs["translation"], outputs["log_prob"])]
        return results[0] if single else results

    def predict(self, signature_name: str, inputs: dict):
        """Raw columnar predict: returns the `"outputs"` of the answer (a dict for several outputs)."""
        answer = self._request("POST", ":predict", {"signature_name": signature_name, "inputs": inputs})
        return answer["outputs"]

    def status(self) -> dict:
        """The model status answer (`model_version_status`)."""
        return self._request("GET", "", None)

    def metadata(self) -> dict:
        """The model metadata answer (signature defs)."""
        return self._request("GET", "/metadata", None)

    def close(self):
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _request(self, method: str, suffix: str, body):
        path = self._prefix + suffix
        # NaN and Infinity as JSON literals, which TF Serving and zoo-serve read (a NaN temperature counts as 1,
        # an infinite one draws uniformly, a non-finite length penalty falls back to the export's).
        content = None if body is None else json.dumps(body, allow_nan=True).encode("utf-8")
        headers = None if body is None else {"content-type": "application/json"}
        for attempt in range(self.retries + 1):
            last_try = attempt == self.retries
            try:
                response = self._http.request(method, path, content=content, headers=headers)
            except httpx.TransportError as error:  # Refused, reset, timed out: try again.
                if last_try:
                    raise ServingError(
                        f"{method} {self._http.base_url}{path} failed after {attempt + 1} attempt(s): "
                        f"{str(error) or type(error).__name__}", 503
                    ) from error
            else:
                if response.status_code < 400:
                    return response.json()
                if response.status_code not in _RETRY_STATUS or last_try:
                    raise ServingError(_error_message(response), response.status_code)
            time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _texts(texts) -> list:
    """`texts`, a sequence of str, as a list; bytes (a sequence of ints) or non-str items are a TypeError."""
    if isinstance(texts, (bytes, bytearray)):
        raise TypeError("Expected a str or a sequence of str, got bytes: decode them first (texts.decode('utf-8'))")
    texts = list(texts)
    wrong = next((t for t in texts if not isinstance(t, str)), None)
    if wrong is not None:
        raise TypeError(f"Expected a str or a sequence of str, got an item of type {type(wrong).__name__}: {wrong!r}")
    return texts


def _plain(value):
    """A NumPy number (np.float32(0.8), an item of np.arange(3)) as the Python one JSON encodes; others as they are."""
    return value.item() if isinstance(value, numbers.Number) and hasattr(value, "item") else value


def _number(name: str, value, kind=numbers.Real):
    """`value`, a `kind` number (NumPy's too), as the Python one; a bool, str or None is a TypeError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{name} must be {'an integer' if kind is numbers.Integral else 'a number'}, got {value!r}")
    return _plain(value)


def _error_message(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"])
    except (ValueError, KeyError, TypeError):
        return response.text[:500] or response.reason_phrase
