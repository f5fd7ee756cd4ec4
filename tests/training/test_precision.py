"""The precision field: explicit policies pass through, auto follows the hardware."""

import pytest

from zoo.training import precision


def test_explicit_policies_pass_through_and_unknown_ones_are_named():
    assert precision.resolve_precision("float32") == "float32"
    assert precision.resolve_precision("mixed_bfloat16") == "mixed_bfloat16"
    with pytest.raises(ValueError, match="unknown precision 'half'.*'auto'"):
        precision.resolve_precision("half")


def test_cpu_flags_decide_native_bfloat16(tmp_path):
    with_bf16 = tmp_path / "with"
    with_bf16.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16\n")
    without = tmp_path / "without"
    without.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2\n")
    assert precision.cpu_has_bfloat16_matmul(str(with_bf16))
    assert not precision.cpu_has_bfloat16_matmul(str(without))
    assert not precision.cpu_has_bfloat16_matmul(str(tmp_path / "missing"))
    assert precision.resolve_precision("auto") in ("float32", "mixed_bfloat16")


def test_auto_picks_bfloat16_on_a_cpu_only_where_its_products_measure_faster(tmp_path):
    with_bf16 = tmp_path / "with"
    with_bf16.write_text("processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16 avx512_fp16\n")
    without = tmp_path / "without"
    without.write_text("processor\t: 0\nflags\t\t: fpu avx2\n")

    def never_measured():
        raise AssertionError("an emulated bfloat16 needs no measurement")

    assert precision.cpu_bfloat16_pays(str(with_bf16), speedup=lambda: 2.0)  # AMD EPYC, AVX512-BF16
    assert precision.cpu_bfloat16_pays(str(with_bf16), speedup=lambda: precision.BFLOAT16_MIN_SPEEDUP)
    assert not precision.cpu_bfloat16_pays(str(with_bf16), speedup=lambda: 0.53)  # Intel Xeon without AMX
    assert not precision.cpu_bfloat16_pays(str(with_bf16), speedup=lambda: 1.1)  # not worth the casts
    assert not precision.cpu_bfloat16_pays(str(without), speedup=never_measured)


def test_the_speedup_is_measured_on_this_cpu_and_once_per_process():
    measured = precision.cpu_bfloat16_speedup.__wrapped__(size=128, repeats=2)
    assert 0.05 < measured < 50  # float32 time over bfloat16 time, both real products
    assert precision.cpu_bfloat16_speedup() is precision.cpu_bfloat16_speedup()
    assert precision.describe_auto("auto") == (
        f" (auto: this CPU's bfloat16 matmuls ran {precision.cpu_bfloat16_speedup():.2f}x float32's)")
    assert precision.describe_auto("float32") == ""


@pytest.mark.parametrize(
    "hardware, expected",
    [
        (dict(tpu=True), "mixed_bfloat16"),
        (dict(gpu_capabilities=[(8, 0)]), "mixed_bfloat16"),  # A100
        (dict(gpu_capabilities=[(9, 0), (8, 6)]), "mixed_bfloat16"),  # H100 + A10
        (dict(gpu_capabilities=[(7, 5)]), "mixed_float16"),  # T4: no native bfloat16
        (dict(gpu_capabilities=[(7, 0), (8, 0)]), "mixed_float16"),  # one V100 decides for all
        (dict(gpu_capabilities=[(7, 5)], cpu_bfloat16=True), "mixed_float16"),  # the GPU trains, not the CPU
        (dict(cpu_bfloat16=True), "mixed_bfloat16"),
        (dict(), "float32"),
    ],
)
def test_auto_follows_the_accelerator(hardware, expected):
    assert precision.choose_precision(**hardware) == expected


def test_mixed_float16_passes_through():
    assert precision.resolve_precision("mixed_float16") == "mixed_float16"
