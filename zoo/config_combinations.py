"""Checks of several recipe fields together, run by `zoo.config_checks.config_problems` after each field's own rule.

Each check is `check(config, fields) -> problems`: it reads only `fields`, the fields whose own rule
accepted them, and yields `"field=value (expected ...)"` lines. Standard library only, as
`zoo.config_checks` is.
"""

from zoo.constants import CPU_REPLICA_STRATEGIES, FIRST_REGULAR_ID, SPM_BYTE_PIECES
from zoo.model_defaults import CHOICE_FIELDS, choice_problems


def preset_choices(config, fields):
    """A structural choice (`CHOICE_FIELDS`: attention, decoder_layers, input_feeding) set for a preset without it,
    answered without asking Keras (`zoo.models.catalog` refuses it in the same words)."""
    if "model" not in fields:  # else its own rule refused it: not a preset
        return []
    return choice_problems(config.model, {field: config[field] for field in CHOICE_FIELDS if field in fields})


def _learning_rate_floor(config, fields):
    if {"min_learning_rate", "learning_rate"} <= fields and config.min_learning_rate > config.learning_rate > 0:
        yield (f"min_learning_rate={config.min_learning_rate!r} (expected <= learning_rate="
               f"{config.learning_rate!r}: the schedule never goes below it)")


def _cudnn_xla(config, fields):
    if {"encoder_implementation", "jit_compile"} <= fields and config.encoder_implementation == "keras" \
            and str(config.jit_compile).lower() == "true":
        yield ("jit_compile='true' (expected auto or false with encoder_implementation='keras': Keras' LSTM/GRU "
               "layers run cuDNN's kernels, which XLA cannot compile)")


def _cpu_replicas(config, fields):
    if {"cpu_replicas", "strategy"} <= fields and config.cpu_replicas > 1 \
            and config.strategy not in CPU_REPLICA_STRATEGIES:
        yield (f"cpu_replicas={config.cpu_replicas!r} (expected 0 with strategy={config.strategy!r}: replicas of the "
               "CPU train under strategy 'mirrored' or 'auto')")


def _one_clipping(config, fields):
    if {"clipnorm", "global_clipnorm"} <= fields and config.clipnorm > 0 and config.global_clipnorm > 0:
        yield (f"global_clipnorm={config.global_clipnorm!r} (expected 0 while clipnorm={config.clipnorm!r}: "
               f"clip each gradient or all of them together, set the other to 0)")


def _sampled_vocabulary(config, fields):
    if {"sampled_vocabulary", "label_smoothing"} <= fields and config.sampled_vocabulary > 0 \
            and config.label_smoothing > 0:
        yield (f"label_smoothing={config.label_smoothing!r} (expected 0 with sampled_vocabulary="
               f"{config.sampled_vocabulary!r}: smoothing spreads over the whole vocabulary, which such a batch does "
               "not see)")


def _vocabularies(config, fields):
    """A sentencepiece side has a fixed size; a shared vocabulary has one kind and one size."""
    for side in ("source", "target"):
        if not {f"{side}_tokenizer", f"{side}_vocab_size"} <= fields:
            continue
        kind, size = config.get(f"{side}_tokenizer"), config.get(f"{side}_vocab_size", 0)
        byte_pieces = SPM_BYTE_PIECES if config.get("spm_byte_fallback", False) else 0
        if kind == "sentencepiece" and size <= FIRST_REGULAR_ID + byte_pieces:
            first = f"the {FIRST_REGULAR_ID} reserved tokens" + (f" and {byte_pieces} byte pieces" if byte_pieces else "")
            yield (f"{side}_vocab_size={size!r} (expected > {FIRST_REGULAR_ID + byte_pieces} with "
                   f"{side}_tokenizer='sentencepiece': {first} come first)")
    if config.get("shared_vocab"):
        for field in ("tokenizer", "vocab_size"):
            source, target = config.get(f"source_{field}"), config.get(f"target_{field}")
            if source != target:
                yield (f"shared_vocab=True (expected source_{field} == target_{field} for one vocabulary "
                       f"of both sides, got {source!r} and {target!r})")


def _token_batches(config, fields):
    """`batch_tokens` sizes each bucket's batches by its longest row, which the maximum lengths bound."""
    if not {"batch_tokens", "max_source_length", "max_target_length"} <= fields or config.batch_tokens <= 0:
        return
    if not (config.max_source_length and config.max_target_length):
        yield (f"batch_tokens={config.batch_tokens!r} (expected 0 while max_source_length or max_target_length "
               f"is 0: token batches are sized by the longest row)")
        return
    longest = max(config.max_source_length, config.max_target_length + 1)  # + 1: </s>
    if config.batch_tokens < longest:
        yield (f"batch_tokens={config.batch_tokens!r} (expected 0 or >= {longest}, the longest row: "
               f"max_source_length, or max_target_length + 1 for </s>)")


def _streaming(config, fields):
    """Only dataset `tsv` reads its training file as a stream."""
    if "stream_train" not in fields or str(config.stream_train).lower() != "true":
        return
    from zoo.data.datasets import dataset_name

    name = dataset_name(config)
    if name != "tsv":
        yield (f"stream_train={config.stream_train!r} (expected 'auto' or 'false' with dataset {name!r}: "
               "only dataset 'tsv' streams its training file)")


COMBINATIONS = (_learning_rate_floor, _one_clipping, _vocabularies, _token_batches, _streaming, _cudnn_xla,
                _cpu_replicas, _sampled_vocabulary)
