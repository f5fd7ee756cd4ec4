"""`zoo-serve`: TF Serving's REST API for one SavedModel, on one machine, without Docker.

    zoo-serve --model_base_path=/path/to/export --model_name=zoo [--rest_api_port=8501]

Serves the highest version under `--model_base_path` and picks up newer versions while running.
`--profile_startup` prints to stderr where the time from the process start to serving went
(`zoo.startup`), once the server is about to listen.
"""

from zoo import startup  # first: the profile's first phase ends at its import

import math
import os

from absl import flags

from serving.limits import ServingLimits
from zoo import cli

_DEFAULT = ServingLimits()
FLAGS = flags.FLAGS
flags.DEFINE_string("model_base_path", None, "Directory holding numeric version dirs (1/, 2/, ...).")
flags.DEFINE_string("model_name", "zoo", "Model name in the URLs: /v1/models/<model_name>.")
flags.DEFINE_integer("rest_api_port", 8501, "Port of the REST API.", lower_bound=1, upper_bound=65535)
flags.DEFINE_string("host", "127.0.0.1", "Address to bind; 0.0.0.0 serves other machines too.")
flags.DEFINE_integer("max_request_bytes", _DEFAULT.max_request_bytes, "Larger request bodies get HTTP 413.",
                     lower_bound=1)
flags.DEFINE_integer("max_sentences_per_request", _DEFAULT.max_sentences_per_request, "More examples get HTTP 413.",
                     lower_bound=1)
flags.DEFINE_integer("max_queued_requests", _DEFAULT.max_queued_requests, "Most predict requests held at once; more: 503.",
                     lower_bound=1)
flags.DEFINE_float("request_timeout_seconds", _DEFAULT.request_timeout_seconds, "Body not in by then: 408; answer: 504.",
                   lower_bound=1e-3)
flags.DEFINE_integer("max_connections", _DEFAULT.max_connections, "Most open connections; past it requests get 503.",
                     lower_bound=1)
flags.DEFINE_float("poll_seconds", 1.0, "Seconds between looks for a new version; 0 disables.", lower_bound=0.0)
flags.register_validator("poll_seconds", lambda value: math.isfinite(value),
                         "--poll_seconds must be a finite number (0 disables polling)")
flags.register_validator("request_timeout_seconds", lambda value: math.isfinite(value),
                         "--request_timeout_seconds must be a finite number of seconds")
flags.register_validator("model_name", lambda value: bool(value) and not set(value) & set("/:?#% "),
                         '--model_name must be a non-empty name without "/", ":", "?", "#", "%" or spaces '
                         "(it is a path segment of /v1/models/<model_name>)")
flags.DEFINE_bool("enable_batching", True, "Merge concurrent requests into batches: every signature whose inputs "
                  "are one value per example or scalars (all of a zoo export's).")
flags.DEFINE_integer("max_batch_size", 64, "Most examples in one merged batch.", lower_bound=1)
flags.DEFINE_integer("num_batch_threads", max(2, os.cpu_count() or 2), "Most batches running at once.", lower_bound=1)
flags.DEFINE_bool("profile_startup", False, startup.FLAG_HELP)
flags.mark_flag_as_required("model_base_path")


def _limits() -> ServingLimits:
    """The flags' `ServingLimits` (absl has checked each number's range); one error line if one is bad."""
    if not os.path.isdir(FLAGS.model_base_path):
        raise cli.CommandError(
            f"--model_base_path {FLAGS.model_base_path!r} is not a directory; expected a "
            "directory holding numeric version directories such as 1/saved_model.pb"
        )
    try:
        return ServingLimits(
            FLAGS.max_request_bytes, FLAGS.max_sentences_per_request, FLAGS.max_queued_requests,
            FLAGS.request_timeout_seconds, FLAGS.max_connections,
        )
    except ValueError as error:
        raise cli.CommandError(str(error)) from None


def main(argv):
    del argv
    if FLAGS.profile_startup:
        startup.enable()
    limits = _limits()
    from serving.server import StartError, check_base_path, listening_sockets, serve  # no TensorFlow

    try:  # a port in use, a base path that names the wrong level: said before TensorFlow's import
        check_base_path(FLAGS.model_base_path)
        sockets = listening_sockets(FLAGS.host, FLAGS.rest_api_port)
        startup.import_tensorflow()  # before the server's modules import it: without Keras, JAX and SciPy
        serve(FLAGS.model_base_path, FLAGS.model_name, FLAGS.host, FLAGS.rest_api_port, limits, FLAGS.poll_seconds,
              FLAGS.max_batch_size, FLAGS.num_batch_threads, FLAGS.enable_batching, on_phase=_on_phase,
              sockets=sockets)
    except StartError as error:
        raise cli.CommandError(str(error)) from None


def _on_phase(key, description):
    """Ends a start-up phase of `serve`; the last one, `app`, prints the profile (`--profile_startup`)."""
    startup.mark(key, description)
    if key == "app":
        startup.report("zoo-serve")


def run():
    cli.run(main, "zoo-serve", __doc__)


if __name__ == "__main__":
    run()
