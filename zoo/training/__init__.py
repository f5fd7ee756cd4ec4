"""Training and evaluation of the zoo's models: `train_and_evaluate(config, workdir)`."""

from zoo.training.callbacks import DevEvaluation, TrainingLimits, TrainingState, save_model_atomically
from zoo.training.evaluation import Translator, evaluate, evaluate_model
from zoo.training.plotting import plot_attention
from zoo.training.trainer import (
    MaskedAccuracy,
    WarmupSchedule,
    build_model,
    build_tokenizers,
    compile_model,
    load_data,
    train_and_evaluate,
)
