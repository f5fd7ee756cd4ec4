"""Serving: TF Serving configs, the `zoo-serve` REST server and the REST client.

Only the client is imported here, so `from serving import TranslationClient` does not load
TensorFlow; the server modules (`serving.rest_app`, `serving.model_registry`) import it.
"""

from serving.client import Hypothesis, Translation, TranslationClient
from serving.errors import ServingError

__all__ = ["Hypothesis", "Translation", "TranslationClient", "ServingError"]
