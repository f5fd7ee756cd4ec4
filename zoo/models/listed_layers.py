"""The layers a zoo layer keeps in lists, as children of its TensorFlow checkpoints."""


def with_listed_layers(layer, children, save_type):
    """`children` (a layer's `_trackable_children`) plus the layers in its list attributes.

    Keras 3 keeps a layer's lists of sublayers (`self.cells = [...]`) in its own tracked lists,
    which it hands to TensorFlow only when writing a SavedModel. A `tf.train.Checkpoint(model=...)`
    of the model alone would then hold none of their weights (the encoder's cells, the decoder's
    cells and bridges); a training checkpoint still reached them through the optimizer's list of
    variables. Each listed layer becomes the child `<attribute>_<index>`.
    """
    if save_type != "checkpoint":
        return children
    import tensorflow as tf

    trackable = tf.__internal__.tracking.Trackable
    for name, value in vars(layer).items():
        if name.startswith("_") or not isinstance(value, list):
            continue
        for index, item in enumerate(value):
            if isinstance(item, trackable):
                children.setdefault(f"{name}_{index}", item)
    return children
