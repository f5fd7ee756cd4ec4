"""A recipe run from end to end: train, evaluate, then export the best model (`zoo-train`).

The export is the recipes' step, not training's: `zoo.training` never imports `zoo.export`
(docs/interfaces.md). A notebook runs the same as the command line:

    results = recipes.train_and_export(recipes.get_config("dates_bahdanau"), "runs/dates")
"""


def export_best_model(workdir):
    """Exports `workdir/best.keras` to `workdir/export/<version>/`; returns the version's path.

    A version already written from this very `best.keras` (a finished workdir run again,
    or a run killed after its export) is returned instead of writing the same model again.
    """
    from zoo.export import export_of_best_model, export_workdir  # TensorFlow and Keras: only when a run gets here

    return export_of_best_model(workdir) or export_workdir(workdir)


def train_and_export(config, workdir, print_fn=None):
    """`zoo.training.train_and_evaluate` with the export at the end (when `config.export` is set).

    Args:
      config: an `ml_collections.ConfigDict` recipe (see `recipes/configs/base.py`).
      workdir: the run's directory (created if needed).
      print_fn: where progress lines go (default: stdout, flushed).

    Returns:
      The results dict written to `workdir/results.json`; `export_path` is the new
      export's version directory (None without export; `export_error` says why it failed).
    """
    from zoo.training import train_and_evaluate

    return train_and_evaluate(config, workdir, print_fn=print_fn, export_fn=export_best_model)
