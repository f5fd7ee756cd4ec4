"""zoo.machine: the CPU the benchmarks record beside their figures."""

import json
import os

from zoo import machine

AMX_CPU = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz
flags\t\t: fpu sse2 fma avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz
flags\t\t: fpu sse2 fma avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8
"""


def test_describe_names_the_cpu_and_its_matrix_features(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(AMX_CPU)
    report = machine.describe(str(cpuinfo))
    assert report["cpu_model"] == "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz"
    assert report["matrix_features"] == ["fma", "avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16"]
    assert report["cpu_count"] == os.cpu_count() and len(report["load_average"]) == 3
    assert json.loads(json.dumps(report)) == report


def test_an_avx2_cpu_has_no_bfloat16_features(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu fma avx2 sha_ni\n")
    assert machine.cpu_flags(str(cpuinfo)) == {"fpu", "fma", "avx2", "sha_ni"}
    assert machine.describe(str(cpuinfo))["matrix_features"] == ["fma", "avx2"]
    assert machine.describe(str(cpuinfo))["cpu_family"] is None  # no family/model lines


def test_the_family_and_model_numbers_tell_two_cpus_of_one_name_apart(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
                       "model name\t: AMD EPYC\nflags\t\t: fpu fma avx2 avx512f avx512_bf16\n")
    report = machine.describe(str(cpuinfo))
    assert report["cpu_model"] == "AMD EPYC" and report["cpu_family"] == "26/2"


def test_a_missing_cpuinfo_still_describes_the_machine(tmp_path):
    report = machine.describe(str(tmp_path / "missing"))
    assert report["matrix_features"] == [] and report["cpu_model"] and report["cpu_count"] == os.cpu_count()
