"""Runs TF Serving's REST API for one model's versions, on one machine, without Docker.

`serve` is what the `zoo-serve` command (`recipes/serve.py`) calls once its flags are checked:
it serves the highest loadable version under `model_base_path` and picks up newer ones while
running.
"""

import logging

from serving.limits import ServingLimits


def serve(model_base_path, model_name="zoo", host="127.0.0.1", port=8501, limits=None, poll_seconds=1.0,
          max_batch_size=64, num_batch_threads=2, enable_batching=True, on_phase=None):
    """Serves `model_base_path` at `http://host:port/v1/models/<model_name>` until interrupted.

    Args:
      model_base_path: directory of numeric version directories (1/, 2/, ...).
      model_name: the model's name in the URLs.
      host, port: where to listen.
      limits: a `ServingLimits` (request size, sentences, queue, timeout, connections).
      poll_seconds: seconds between looks for a new version; 0 disables.
      max_batch_size, num_batch_threads, enable_batching: how concurrent requests are merged.
      on_phase: None, or `on_phase(key, description)`, called as each start-up phase ends, the last
        one (`app`) just before the server starts listening (`zoo-serve --profile_startup`).
    """
    on_phase = on_phase or (lambda key, description: None)
    # Imported here so that the command's --help and usage errors answer before TensorFlow loads.
    import uvicorn

    from serving.batching import BatchScheduler
    from serving.model_registry import ModelRegistry
    from serving.rest_app import create_app

    on_phase("import_server", "uvicorn, starlette and the server's modules")
    limits = limits or ServingLimits()
    logging.getLogger().setLevel(logging.INFO)
    registry = ModelRegistry(model_name, model_base_path)
    if not registry.poll():
        logging.warning("No loadable version under %s yet; waiting for one.", model_base_path)
    on_phase("load_model", "the newest version: its op libraries, tf.saved_model.load and its warmup requests")
    scheduler = BatchScheduler(max_batch_size, num_batch_threads, enable_batching)
    rest_app = create_app(registry, limits, poll_seconds, scheduler)
    on_phase("app", "the batch scheduler and the REST app")
    logging.info("zoo-serve: REST API at http://%s:%d/v1/models/%s", host, port, model_name)
    uvicorn.run(rest_app, host=host, port=port, log_level="warning", access_log=False, **limits.uvicorn_options())
