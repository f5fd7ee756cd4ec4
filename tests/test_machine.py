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


STAT = "cpu  {} 0 {} {} 10 0 {} {} 0 0\ncpu0  1 2 3 4 5 6 7 8 0 0\nintr 12345\n"


def test_cpu_ticks_reads_the_machine_wide_line_of_proc_stat(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text(STAT.format(1000, 200, 5000, 30, 400))
    ticks = machine.cpu_ticks(str(stat))
    assert ticks == {"user": 1000, "nice": 0, "system": 200, "idle": 5000, "iowait": 10, "irq": 0,
                     "softirq": 30, "steal": 400}
    assert machine.cpu_ticks(str(tmp_path / "missing")) is None
    stat.write_text("intr 12345\n\n")
    assert machine.cpu_ticks(str(stat)) is None  # no "cpu" line
    stat.write_text("cpu  12 nan\n")
    assert machine.cpu_ticks(str(stat)) is None


def test_cpu_shares_split_the_time_between_two_readings(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text(STAT.format(1000, 200, 5000, 30, 400))
    before = machine.cpu_ticks(str(stat))
    # then 300 ticks busy (240 user, 50 system, 10 softirq), 80 idle, 100 stolen
    stat.write_text(STAT.format(1240, 250, 5080, 40, 500))
    after = machine.cpu_ticks(str(stat))
    shares = machine.cpu_shares(before, after)
    assert shares == {"busy": round(300 / 480, 3), "idle": round(80 / 480, 3), "steal": round(100 / 480, 3),
                      "steal_of_demand": round(100 / 400, 3)}
    assert machine.cpu_shares(before, before) is None  # no tick passed
    assert machine.cpu_shares(None, after) is None and machine.cpu_shares(before, None) is None


def test_describe_says_how_much_cpu_time_the_hypervisor_took_since_boot():
    shares = machine.describe()["cpu_shares_since_boot"]
    if machine.cpu_ticks() is None:  # not Linux
        assert shares is None
        return
    assert set(shares) == {"busy", "idle", "steal", "steal_of_demand"}
    assert abs(shares["busy"] + shares["idle"] + shares["steal"] - 1) <= 0.002
    assert 0 <= shares["steal_of_demand"] <= 1
