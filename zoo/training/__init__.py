"""Training of the zoo's models: `train_and_evaluate(config, workdir)`.

Translating and scoring (dev BLEU, `zoo-eval`) are `zoo.inference`; the end-of-run export
is passed in by the recipes (`recipes.train_and_export`), so training never imports
`zoo.export`.
"""

from zoo.training.callbacks import DevEvaluation, TrainingLimits, TrainingState, save_model_atomically
from zoo.training.optimization import MaskedAccuracy, WarmupSchedule
from zoo.training.trainer import (
    build_model,
    build_tokenizers,
    compile_model,
    load_data,
    train_and_evaluate,
)
