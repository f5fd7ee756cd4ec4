"""The dev evaluations read a source as its export will (`source_cap`), not cut at the training's cap."""

from test_trainer import tiny_config

from zoo.constants import DEFAULT_MAX_SOURCE_LENGTH
from zoo.training import trainer


def test_dev_translations_read_past_the_training_source_cap(tmp_path, monkeypatch):
    made = []

    class Recording(trainer.KerasTranslator):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(trainer, "KerasTranslator", Recording)
    config = tiny_config(train_steps=1, num_epochs=1, max_source_length=4)  # dates: ~15-40 characters
    trainer.train_and_evaluate(config, str(tmp_path / "run"), print_fn=lambda line: None)
    assert [translator.max_source_length for translator in made] == [DEFAULT_MAX_SOURCE_LENGTH]
