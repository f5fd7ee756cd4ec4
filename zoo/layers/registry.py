"""The one registry of attention scores: `zoo.layers.get(name, **kwargs)` and `zoo.layers.names()`.

A score class is declared once with `@register("name", "alias", ...)`, which registers it
both for Keras serialization (as `zoo>ClassName`) and under its names here, so models,
benchmarks and tests ask this registry which scores exist instead of keeping their own
name -> class maps.
"""

import inspect

import keras

_CLASSES = {}  # canonical name -> class
_ALIASES = {}  # alias -> canonical name


def register(name, *aliases):
    """Class decorator: registers an attention class with Keras and under `name` and `aliases`.

    Example:
    >>> @zoo.layers.register("scaled_general")
    ... class ScaledGeneralAttention(zoo.layers.BaseAttention): ...
    """

    def decorate(cls):
        taken = [n for n in (name, *aliases) if n in _CLASSES or n in _ALIASES]
        if taken:
            raise ValueError(f"attention name(s) {taken} are already registered; expected new names for {cls.__name__}")
        cls = keras.saving.register_keras_serializable(package="zoo")(cls)
        _CLASSES[name] = cls
        _ALIASES.update({alias: name for alias in aliases})
        return cls

    return decorate


def names():
    """The canonical score names, sorted: `['additive', 'concat', 'dot', 'general', 'reduced_rank']`."""
    return sorted(_CLASSES)


def aliases():
    """`{alias: canonical name}`, e.g. `{'bahdanau': 'additive', 'multiplicative': 'general'}`."""
    return dict(sorted(_ALIASES.items()))


def canonical_name(name):
    """The canonical name of a score name or alias; ValueError listing the valid names otherwise."""
    if name in _CLASSES:
        return name
    if name in _ALIASES:
        return _ALIASES[name]
    raise ValueError(f"unknown attention {name!r}; expected one of {names() + sorted(_ALIASES)}")


def arguments(name):
    """The constructor arguments of the score `name`, e.g. `('units', 'kernel_initializer', 'dropout')`."""
    parameters = inspect.signature(_CLASSES[canonical_name(name)].__init__).parameters.values()
    return tuple(p.name for p in parameters if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD)


def get(name, /, sizes=None, **kwargs):
    """A new (unbuilt) attention layer of the score `name` (or an alias).

    Args:
        name: one of `names()` or of `aliases()` (positional, so that `name=` names the layer).
        sizes: optional `{argument: value}` offered to every score alike, of which the
            score takes the ones it has (`{"units": 256, "rank": 64}` gives `units` to
            concat and additive, `rank` to reduced_rank, nothing to dot and general).
        **kwargs: the class's constructor arguments (`arguments(name)`) and Keras layer
            arguments (`name=`, `dtype=`), all passed on.

    Example:
    >>> zoo.layers.get("concat", units=128, name="attention")
    <ConcatAttention name=attention, built=False>
    """
    takes = arguments(name)
    offered = {key: value for key, value in (sizes or {}).items() if key in takes}
    return _CLASSES[canonical_name(name)](**offered, **kwargs)
