"""zoo.layers attention: each variant against a numpy implementation of its equation.

The references below are written from the papers' equations, in float64, with the
matrices of the equations (`W`, `Q`, `R`, `W1`, `W2`, `v`) read back from the layer
by weight name. Backend-agnostic: runs under KERAS_BACKEND=tensorflow and jax.
"""

import keras
import numpy as np
import pytest
from keras import ops

import zoo.layers
from layer_test_case import run_layer_test
from zoo.layers import (
    AdditiveAttention,
    BahdanauAttention,
    ConcatAttention,
    DotAttention,
    GeneralAttention,
    MultiplicativeAttention,
    ReducedRankAttention,
)

B, TQ, TV, DQ, DV = 4, 3, 7, 5, 6
UNITS, RANK = 8, 3
LENGTHS = (7, 4, 1, 0)  # a full row, two padded rows and an all-masked row
POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")


# -- numpy references: scores e[b, t, i] = score(s_bt, h_bi) ------------------------
def dot_scores(s, h, w):
    return np.einsum("btd,bid->bti", s, h)


def scaled_dot_scores(s, h, w):
    return np.einsum("btd,bid->bti", s, h) / np.sqrt(h.shape[-1])


def general_scores(s, h, w):
    big_w = w["kernel"].T  # W (Dq, Dv): e = s^T W h
    return np.einsum("btq,qv,biv->bti", s, big_w, h)


def reduced_rank_scores(s, h, w):
    q_mat, r_mat = w["query_kernel"].T, w["value_kernel"].T  # Q (rank, Dq), R (rank, Dv)
    qs = np.einsum("rq,btq->btr", q_mat, s)
    rh = np.einsum("rv,biv->bir", r_mat, h)
    return np.einsum("btr,bir->bti", qs, rh)


def concat_scores(s, h, w):
    big_w, v = w["kernel"].T, w["score_vector"]  # W (units, Dv + Dq): e = v^T tanh(W [h; s])
    batch, tq, tv = s.shape[0], s.shape[1], h.shape[1]
    e = np.zeros((batch, tq, tv))
    for b in range(batch):
        for t in range(tq):
            for i in range(tv):
                e[b, t, i] = v @ np.tanh(big_w @ np.concatenate([h[b, i], s[b, t]]))
    return e


def additive_scores(s, h, w):
    w1, w2, v = w["value_kernel"].T, w["query_kernel"].T, w["score_vector"]  # W1 h, W2 s
    hidden = np.tanh(
        np.einsum("uv,biv->biu", w1, h)[:, None, :, :] + np.einsum("uq,btq->btu", w2, s)[:, :, None, :]
    )
    return np.einsum("btiu,u->bti", hidden, v)


def masked_softmax_and_context(e, h, mask):
    """Softmax over the real positions only; a row without any gets zero weights."""
    weights = np.zeros_like(e)
    for b in range(e.shape[0]):
        real = mask[b]
        if not real.any():
            continue
        for t in range(e.shape[1]):
            x = e[b, t, real]
            x = np.exp(x - x.max())
            weights[b, t, real] = x / x.sum()
    return weights, np.einsum("bti,biv->btv", weights, h)


SIZES = {"units": UNITS, "rank": RANK}  # offered to every score; each takes the ones it has
# Per registered score: (query dim, reference, weight names, value-side key dim).
REFERENCES = {
    "dot": (DV, dot_scores, set(), DV),
    "general": (DQ, general_scores, {"kernel"}, DQ),
    "reduced_rank": (DQ, reduced_rank_scores, {"query_kernel", "value_kernel"}, RANK),
    "concat": (DQ, concat_scores, {"kernel", "score_vector"}, UNITS),
    "additive": (DQ, additive_scores, {"query_kernel", "value_kernel", "score_vector"}, UNITS),
}


def registered(name, **extra):
    """`(class, constructor kwargs)` of the score `name`, as `zoo.layers.get` makes it."""
    kwargs = {key: value for key, value in SIZES.items() if key in zoo.layers.arguments(name)}
    return type(zoo.layers.get(name, SIZES, **extra)), dict(kwargs, **extra)


# (id, class, constructor kwargs, query dim, reference, weight names, value-side key dim)
VARIANTS = [(name, *registered(name), *REFERENCES[name]) for name in zoo.layers.names() if name in REFERENCES]
VARIANTS.append(("scaled_dot", *registered("dot", scale=True), DV, scaled_dot_scores, set(), DV))
VARIANT_IDS = [v[0] for v in VARIANTS]
variants = pytest.mark.parametrize(
    "cls, kwargs, dq, reference, weight_names, key_dim", [v[1:] for v in VARIANTS], ids=VARIANT_IDS
)
query_ranks = pytest.mark.parametrize("query_rank", [2, 3], ids=["query_BD", "query_BTD"])


def make_inputs(dq, query_rank, seed=0, lengths=LENGTHS):
    rng = np.random.default_rng(seed)
    query_shape = (B, dq) if query_rank == 2 else (B, TQ, dq)
    query = rng.normal(size=query_shape).astype("float32")
    value = rng.normal(size=(B, TV, DV)).astype("float32")
    mask = np.arange(TV)[None, :] < np.array(lengths)[:, None]  # (B, Tv) bool
    return query, value, mask


def randomize_weights(layer, seed=1):
    """Gives every weight its own random values (initializers could repeat themselves)."""
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        w.assign(rng.normal(scale=0.5, size=w.shape).astype("float32"))
    return {w.name: ops.convert_to_numpy(w).astype("float64") for w in layer.weights}


def reference_outputs(reference, weights, query, value, mask):
    s = query.astype("float64")
    s3 = s[:, None, :] if s.ndim == 2 else s
    scores = reference(s3, value.astype("float64"), weights)
    att, context = masked_softmax_and_context(scores, value, mask)
    if s.ndim == 2:
        return context[:, 0], att[:, 0]
    return context, att


def as_float32_numpy(x):
    return ops.convert_to_numpy(ops.cast(x, "float32"))


# -- the shared layer checks (scaled dot is the same class as dot: skipped here) ---
@pytest.mark.parametrize(
    "cls, kwargs, dq, reference, weight_names, key_dim",
    [v[1:] for v in VARIANTS if v[0] != "scaled_dot"],
    ids=[v[0] for v in VARIANTS if v[0] != "scaled_dot"],
)
@query_ranks
def test_standard_layer_checks(cls, kwargs, dq, reference, weight_names, key_dim, query_rank):
    query, value, mask = make_inputs(dq, query_rank)
    lead = query.shape[:-1]

    def masked_weights_are_exact_zeros(outputs):
        context, weights = outputs
        mask_b = np.broadcast_to(mask[:, None, :] if query_rank == 3 else mask, weights.shape)
        assert np.all(weights[~mask_b] == 0), "masked positions must get weight exactly 0"
        real_rows = np.array(LENGTHS) > 0
        np.testing.assert_allclose(weights[real_rows].sum(-1), 1.0, atol=1e-2)
        assert np.all(context[~real_rows] == 0), "an all-masked row must give a zero context"

    run_layer_test(
        cls,
        init_kwargs=kwargs,
        input_data=(query, value),
        call_kwargs={"mask": mask},
        expected_output_shapes=(lead + (DV,), lead + (TV,)),
        expected_num_trainable_weights=len(weight_names),
        output_check=masked_weights_are_exact_zeros,
    )


# -- the equations -----------------------------------------------------------------
@variants
@query_ranks
def test_matches_numpy_equation(cls, kwargs, dq, reference, weight_names, key_dim, query_rank):
    query, value, mask = make_inputs(dq, query_rank)
    mask[0, 2] = False  # a hole inside a row, not only right padding
    layer = cls(**kwargs)
    layer(query, value, mask=mask)
    weights = randomize_weights(layer)
    assert set(weights) == weight_names

    context, att = layer(query, value, mask=mask)
    expected_context, expected_att = reference_outputs(reference, weights, query, value, mask)
    assert np.max(np.abs(ops.convert_to_numpy(att) - expected_att)) <= 1e-5
    assert np.max(np.abs(ops.convert_to_numpy(context) - expected_context)) <= 1e-5
    # Guard against a vacuous comparison: the weights must not be uniform.
    assert np.ptp(expected_att[0]) > 0.05


@variants
def test_without_mask_matches_plain_softmax(cls, kwargs, dq, reference, weight_names, key_dim):
    query, value, _ = make_inputs(dq, 3)
    layer = cls(**kwargs)
    layer(query, value)
    weights = randomize_weights(layer)
    context, att = layer(query, value)
    expected_context, expected_att = reference_outputs(
        reference, weights, query, value, np.ones((B, TV), bool)
    )
    np.testing.assert_allclose(ops.convert_to_numpy(att), expected_att, atol=1e-5, rtol=0)
    np.testing.assert_allclose(ops.convert_to_numpy(context), expected_context, atol=1e-5, rtol=0)


@variants
def test_single_step_equals_one_row_of_all_steps(cls, kwargs, dq, reference, weight_names, key_dim):
    query, value, mask = make_inputs(dq, 3)
    layer = cls(**kwargs)
    all_context, all_att = layer(query, value, mask=mask)
    for t in range(TQ):
        context, att = layer(query[:, t], value, mask=mask)
        for one, every in ((context, all_context), (att, all_att)):
            np.testing.assert_allclose(
                ops.convert_to_numpy(one), ops.convert_to_numpy(every)[:, t], atol=1e-6
            )


# -- precomputed keys --------------------------------------------------------------
@variants
@pytest.mark.parametrize("policy", POLICIES)
def test_precomputed_keys_give_the_same_outputs(
    cls, kwargs, dq, reference, weight_names, key_dim, policy
):
    query, value, mask = make_inputs(dq, 2)
    layer = cls(**kwargs, dtype=policy)
    plain = layer(query, value, mask=mask)
    keys = layer.precompute(value)
    assert tuple(keys.shape) == (B, TV, key_dim)
    if weight_names:  # dot's precompute is the identity: it returns its input as is
        assert keras.backend.standardize_dtype(keys.dtype) == layer.compute_dtype
    with_keys = layer(query, value, mask=mask, keys=keys)
    for a, b in zip(with_keys, plain):
        np.testing.assert_array_equal(as_float32_numpy(a), as_float32_numpy(b))


def test_precompute_before_build_says_to_call_the_layer_first():
    with pytest.raises(ValueError, match="before `precompute`"):
        AdditiveAttention(units=4).precompute(np.ones((2, 3, 4), "float32"))


# -- masking -----------------------------------------------------------------------
@variants
@pytest.mark.parametrize("policy", POLICIES)
def test_all_masked_row_gives_zeros_not_nan(cls, kwargs, dq, reference, weight_names, key_dim, policy):
    query, value, _ = make_inputs(dq, 3)
    mask = np.zeros((B, TV), bool)
    context, att = cls(**kwargs, dtype=policy)(query, value, mask=mask)
    np.testing.assert_array_equal(as_float32_numpy(context), np.zeros((B, TQ, DV)))
    np.testing.assert_array_equal(as_float32_numpy(att), np.zeros((B, TQ, TV)))


@variants
@pytest.mark.parametrize("policy", POLICIES)
def test_masked_weights_exactly_zero_and_softmax_stable_with_large_scores(
    cls, kwargs, dq, reference, weight_names, key_dim, policy
):
    # Scores in the thousands: exp() overflows in float16 unless the softmax runs wider.
    query, value, mask = make_inputs(dq, 3)
    query, value = query * 30.0, value * 30.0
    layer = cls(**kwargs, dtype=policy)
    layer(query, value, mask=mask)
    randomize_weights(layer)
    context, att = layer(query, value, mask=mask)
    assert keras.backend.standardize_dtype(att.dtype) == layer.compute_dtype
    att, context = as_float32_numpy(att), as_float32_numpy(context)
    assert np.all(np.isfinite(att)) and np.all(np.isfinite(context))
    assert np.all(att[np.broadcast_to(~mask[:, None, :], att.shape)] == 0)
    np.testing.assert_allclose(att[np.array(LENGTHS) > 0].sum(-1), 1.0, atol=1e-2)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make", [lambda policy: DotAttention(dtype=policy),
                                  lambda policy: GeneralAttention(kernel_initializer="identity", dtype=policy)])
def test_scores_past_float16s_range_give_finite_weights(make, policy):
    # s.h = 65536 passed float16's largest value, 65504: the score was inf, the weights NaN.
    query = np.full((1, 1024), 8.0, "float32")
    value = np.stack([np.full(1024, 8.0), np.full(1024, -8.0), np.zeros(1024)])[None].astype("float32")
    context, weights = make(policy)(query, value)
    np.testing.assert_array_equal(as_float32_numpy(weights), [[1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(as_float32_numpy(context), value[:, 0])


def test_real_scores_below_the_masked_fill_still_get_the_weight():
    # Masked scores were -1e9: with every real score below that, the weight went to the masked positions
    # and was then zeroed, leaving a row with real tokens all zeros.
    query, value = np.array([[-4e4]], "float32"), np.array([[[1e5], [2e5], [0.0]]], "float32")
    context, weights = DotAttention()(query, value, mask=np.array([[True, True, False]]))
    np.testing.assert_array_equal(ops.convert_to_numpy(weights), [[1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(ops.convert_to_numpy(context), [[1e5]])


@pytest.mark.parametrize("make", [DotAttention, GeneralAttention, lambda: AdditiveAttention(4)])
def test_keras_implicit_masks_are_read_and_passed_on(make):
    # The mask of an Embedding(mask_zero=True) before the layer was dropped: padded source positions got
    # weight, and a loss after the layer counted padded target positions.
    source, target = keras.Input((None,), dtype="int32"), keras.Input((None,), dtype="int32")
    value = keras.layers.Embedding(10, 4, mask_zero=True)(source)
    query = keras.layers.Embedding(10, 4, mask_zero=True)(target)
    layer = make()
    context, weights = layer(query, value)
    passed_on = keras.layers.Dense(2)(context)
    model = keras.Model([source, target], [weights, passed_on])
    source_ids, target_ids = np.array([[1, 2, 0, 0], [3, 0, 0, 0]]), np.array([[3, 4, 0], [5, 0, 0]])
    attention, _ = model.predict([source_ids, target_ids], verbose=0)
    assert np.all(attention[source_ids[:, None, :].repeat(3, 1) == 0] == 0)
    np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-6)
    for output in (context, weights, passed_on):  # the query's mask, as keras.layers.Attention passes it on
        assert output._keras_mask is not None and tuple(output._keras_mask.shape) == (None, None)
    explicit = layer(query, value, mask=keras.ops.ones_like(source, dtype="bool"))[1]  # an explicit mask wins
    attention, all_real = keras.Model([source, target], [weights, explicit]).predict([source_ids, target_ids], verbose=0)
    assert np.all(all_real[:, :, 2:] > 0) and np.all(attention[:, :, 2:] == 0)


@variants
def test_masked_values_do_not_change_the_outputs(cls, kwargs, dq, reference, weight_names, key_dim):
    query, value, mask = make_inputs(dq, 3)
    layer = cls(**kwargs)
    context, att = layer(query, value, mask=mask)
    other = np.where(mask[:, :, None], value, 1e3 * np.random.default_rng(5).normal(size=value.shape))
    other_context, other_att = layer(query, other.astype("float32"), mask=mask)
    np.testing.assert_array_equal(ops.convert_to_numpy(other_att), ops.convert_to_numpy(att))
    np.testing.assert_array_equal(ops.convert_to_numpy(other_context), ops.convert_to_numpy(context))


def test_global_mixed_precision_policy():
    keras.config.set_dtype_policy("mixed_float16")  # restored by conftest
    query, value, mask = make_inputs(DQ, 2)
    layer = AdditiveAttention(units=UNITS)
    context, att = layer(query, value, mask=mask)
    assert [w.dtype for w in layer.weights] == ["float32"] * 3
    assert keras.backend.standardize_dtype(context.dtype) == "float16"
    assert keras.backend.standardize_dtype(att.dtype) == "float16"


# -- symbolic shapes ---------------------------------------------------------------
@variants
def test_symbolic_call_with_unknown_lengths(cls, kwargs, dq, reference, weight_names, key_dim):
    query = keras.Input((None, dq))
    value = keras.Input((None, DV))
    mask = keras.Input((None,), dtype="bool")
    context, att = cls(**kwargs)(query, value, mask=mask)
    assert tuple(context.shape) == (None, None, DV)
    assert tuple(att.shape) == (None, None, None)
    model = keras.Model([query, value, mask], [context, att])
    for tq, tv in ((2, 3), (5, 9)):
        rng = np.random.default_rng(tq)
        out_context, out_att = model.predict(
            [rng.normal(size=(2, tq, dq)), rng.normal(size=(2, tv, DV)), np.ones((2, tv), bool)],
            verbose=0,
        )
        assert out_context.shape == (2, tq, DV) and out_att.shape == (2, tq, tv)


# -- dropout -----------------------------------------------------------------------
def test_dropout_only_in_training():
    query, value, mask = make_inputs(DQ, 3, lengths=(7, 7, 7, 7))
    layer = GeneralAttention(dropout=0.5)
    reference = GeneralAttention()
    layer(query, value, mask=mask)
    reference(query, value, mask=mask)
    reference.set_weights(layer.get_weights())
    expected = reference(query, value, mask=mask)[1]
    for training in (None, False):
        np.testing.assert_array_equal(
            ops.convert_to_numpy(layer(query, value, mask=mask, training=training)[1]),
            ops.convert_to_numpy(expected),
        )
    dropped = ops.convert_to_numpy(layer(query, value, mask=mask, training=True)[1])
    expected = ops.convert_to_numpy(expected)
    zeroed = dropped == 0
    assert 0 < zeroed.mean() < 1, "dropout at rate 0.5 should zero some weights and keep others"
    np.testing.assert_allclose(dropped[~zeroed], expected[~zeroed] / 0.5, rtol=1e-6)


# -- aliases and registration ------------------------------------------------------
def test_every_registered_score_is_checked_against_its_equation():
    assert zoo.layers.names() == ["additive", "concat", "dot", "general", "reduced_rank"]
    assert sorted(REFERENCES) == zoo.layers.names()


def test_the_registry_makes_each_score_by_name_and_alias():
    assert zoo.layers.aliases() == {"bahdanau": "additive", "multiplicative": "general"}
    expected = {"additive": AdditiveAttention, "bahdanau": AdditiveAttention, "concat": ConcatAttention,
                "dot": DotAttention, "general": GeneralAttention, "multiplicative": GeneralAttention,
                "reduced_rank": ReducedRankAttention}  # fmt: skip
    for name, cls in expected.items():
        layer = zoo.layers.get(name, SIZES, name="attention", dtype="mixed_bfloat16", dropout=0.25)
        assert type(layer) is cls and layer.name == "attention" and layer.dropout == 0.25
        assert layer.compute_dtype == "bfloat16"
        assert keras.saving.get_registered_name(cls) == f"zoo>{cls.__name__}"
    assert zoo.layers.get("concat", units=3).units == 3
    assert zoo.layers.get("reduced_rank", SIZES).rank == RANK
    assert zoo.layers.arguments("additive") == ("units", "kernel_initializer", "dropout")
    assert zoo.layers.arguments("dot") == ("scale", "dropout")


def test_the_registry_names_what_was_wrong():
    with pytest.raises(ValueError, match=r"unknown attention 'luong'; expected one of \['additive', .*'multiplicative'\]"):
        zoo.layers.get("luong")
    with pytest.raises(ValueError, match=r"DotAttention: \{'units': 3\}"):
        zoo.layers.get("dot", units=3)
    with pytest.raises(ValueError, match=r"already registered"):
        zoo.layers.register("dot")(type("OtherDot", (zoo.layers.BaseAttention,), {}))
    with pytest.raises(ValueError, match=r"already registered"):
        zoo.layers.register("scaled_general", "bahdanau")(type("Other", (zoo.layers.BaseAttention,), {}))
    assert "scaled_general" not in zoo.layers.names()  # a refused class leaves the registry as it was


def test_aliases_are_the_same_classes():
    assert BahdanauAttention is AdditiveAttention
    assert MultiplicativeAttention is GeneralAttention
    layer = BahdanauAttention(units=3)
    assert keras.saving.get_registered_name(type(layer)) == "zoo>AdditiveAttention"
    assert keras.saving.get_registered_name(MultiplicativeAttention) == "zoo>GeneralAttention"


@pytest.mark.parametrize(
    "cls, kwargs",
    [
        (DotAttention, {"scale": True, "dropout": 0.1}),
        (GeneralAttention, {"kernel_initializer": "zeros"}),
        (ReducedRankAttention, {"rank": 2, "kernel_initializer": "ones"}),
        (ConcatAttention, {"units": 3, "dropout": 0.2}),
        (AdditiveAttention, {"units": 5, "kernel_initializer": "he_normal"}),
    ],
    ids=lambda x: x.__name__ if isinstance(x, type) else None,
)
def test_config_holds_every_constructor_argument(cls, kwargs):
    config = cls(**kwargs).get_config()
    for key, value in kwargs.items():
        if key == "kernel_initializer":
            restored = keras.initializers.get(config[key])
            assert type(restored) is type(keras.initializers.get(value))
        else:
            assert config[key] == value


# -- errors ------------------------------------------------------------------------
def test_dot_attention_needs_equal_query_and_value_sizes():
    with pytest.raises(ValueError, match=r"received query dim 5 and value dim 6"):
        DotAttention()(np.ones((2, 5), "float32"), np.ones((2, 3, 6), "float32"))


@variants
@pytest.mark.parametrize("mask_shape", [(B, TV + 1), (B + 1, TV), (B, 1, TV), (B,)])
def test_mask_of_the_wrong_shape(cls, kwargs, dq, reference, weight_names, key_dim, mask_shape):
    query, value, _ = make_inputs(dq, 2)
    expected = rf"mask must be bool with shape \(B, Tv\) = \({B}, {TV}\).*received mask of shape"
    with pytest.raises(ValueError, match=expected) as info:
        cls(**kwargs)(query, value, mask=np.ones(mask_shape, bool))
    assert str(tuple(mask_shape)) in str(info.value)


@variants
@query_ranks
def test_query_keys_and_value_of_different_batches(cls, kwargs, dq, reference, weight_names, key_dim, query_rank):
    # One query row against B values broadcast silently in additive attention; the others failed in einsum.
    query, value, mask = make_inputs(dq, query_rank)
    layer = cls(**kwargs)
    for other in (query[:1], query[:-1]):
        expected = rf"query and value must have the same batch size, received query of shape \({other.shape[0]}, "
        with pytest.raises(ValueError, match=expected):
            layer(other, value, mask=mask)
    keys = layer.precompute(value)
    with pytest.raises(ValueError, match=r"keys and value must have the same \(B, Tv\), received keys of shape"):
        layer(query, value, mask=mask, keys=keys[:, :-1])


@pytest.mark.parametrize("rank", [0, -2, 2.5, True, "4"])
def test_rank_must_be_a_positive_integer(rank):
    with pytest.raises(ValueError, match=rf"`rank` must be a positive integer, received rank={rank!r}"):
        ReducedRankAttention(rank=rank)


@pytest.mark.parametrize("cls", [ConcatAttention, AdditiveAttention], ids=lambda c: c.__name__)
@pytest.mark.parametrize("units", [0, -1, 1.5, None])
def test_units_must_be_a_positive_integer(cls, units):
    expected = rf"`units` must be a positive integer, received units={units!r}"
    with pytest.raises(ValueError, match=expected):
        cls(units=units)


@pytest.mark.parametrize("dropout", [-0.1, 1.0])
def test_dropout_must_be_a_rate(dropout):
    with pytest.raises(ValueError, match=rf"`dropout` must be in \[0, 1\), received dropout={dropout}"):
        GeneralAttention(dropout=dropout)


def test_query_and_value_ranks_are_checked():
    expected = r"query must have shape \(B, Dq\) or \(B, Tq, Dq\), received shape \(2, 1, 3, 4\)"
    with pytest.raises(ValueError, match=expected):
        GeneralAttention()(np.ones((2, 1, 3, 4), "float32"), np.ones((2, 3, 4), "float32"))
    expected = r"value must have shape \(B, Tv, Dv\), received shape \(2, 4\)"
    with pytest.raises(ValueError, match=expected):
        GeneralAttention()(np.ones((2, 4), "float32"), np.ones((2, 4), "float32"))


@variants
def test_a_built_layer_checks_the_sizes_of_later_calls(cls, kwargs, dq, reference, weight_names, key_dim):
    query, value, mask = make_inputs(dq, 3)
    layer = cls(**kwargs)
    layer(query, value, mask=mask)
    built = rf"\(the layer was built for query \(\.\.\., {dq}\) and value \(\.\.\., {DV}\)\)"
    keys = layer.precompute(value)
    wrong = {"query": (np.ones((B, TQ, dq + 1), "float32"), value, None),
             "value": (query, np.ones((B, TV, DV + 1), "float32"), None),
             "keys": (query, value, np.ones((B, TV, keys.shape[-1] + 1), "float32"))}
    for name, (q, v, k) in wrong.items():
        with pytest.raises(ValueError, match=rf"{name} must have last dimension \d+ {built}, received {name} of shape"):
            layer(q, v, mask=mask, keys=k)
    # A wrong rank is named as such, before the batch sizes are compared.
    with pytest.raises(ValueError, match=r"query must have shape \(B, Dq\) or \(B, Tq, Dq\), received shape \(1, "):
        layer(query[None], value, mask=mask)
    with pytest.raises(ValueError, match=r"keys must have shape \(B, Tv, Dk\), received shape"):
        layer(query, value, mask=mask, keys=keys[0])
    layer(query, value, mask=mask, keys=keys)  # the right keys still pass


@pytest.mark.parametrize("make, method", [
    (lambda: ReducedRankAttention(3), "score_query"), (lambda: ConcatAttention(4), "score"),
    (lambda: AdditiveAttention(4), "score"), (lambda: DotAttention(scale=True), "score_query"),
])
def test_the_score_methods_of_an_unbuilt_layer_say_so(make, method):
    query = np.ones((2, 3, 6), "float32")
    arguments = (query,) if method == "score_query" else (query, np.ones((2, 4, 6), "float32"))
    with pytest.raises(ValueError, match=rf"call the layer once .* before `{method}`"):
        getattr(make(), method)(*arguments)


def test_constructor_arguments_of_the_wrong_type():
    with pytest.raises(TypeError, match=r"`scale` must be True or False, received scale='False'"):
        DotAttention(scale="False")  # not True
    for dropout in ("x", None, True):
        with pytest.raises(ValueError, match=rf"`dropout` must be in \[0, 1\), received dropout={dropout!r}"):
            GeneralAttention(dropout=dropout)


@pytest.mark.skipif(keras.backend.backend() == "jax", reason="JAX refuses a string array before the layer sees it")
def test_a_mask_of_strings_is_refused():
    with pytest.raises(TypeError, match="mask must be bool \\(or 0/1 numbers\\), received dtype string"):
        DotAttention()(np.ones((2, 3, 4), "float32"), np.ones((2, 5, 4), "float32"), mask=np.full((2, 5), "a"))


@pytest.mark.parametrize("make", [lambda: ConcatAttention(4), lambda: AdditiveAttention(4),
                                  lambda: ReducedRankAttention(3), GeneralAttention], ids=lambda m: "")
def test_score_outside_the_call_under_mixed_precision(make):
    # Keras casts a call's inputs; `score(query, precompute(value))` on float32 inputs must cast them too.
    query, value, _ = make_inputs(6, 3)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        layer = make()
        _, weights = layer(query, value)
        scores = layer.score(query, layer.precompute(value))
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert keras.backend.standardize_dtype(scores.dtype) == "bfloat16"
    expected = ops.softmax(ops.cast(scores, "float32"), axis=-1)
    np.testing.assert_allclose(ops.convert_to_numpy(expected), ops.convert_to_numpy(ops.cast(weights, "float32")),
                               atol=2e-2)
