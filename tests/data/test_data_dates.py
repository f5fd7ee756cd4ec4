"""The built-in `dates` task: determinism, disjoint splits, correct targets, variety."""

import collections
import datetime
import re
import time

import pytest

from zoo.data import dates, read_tsv

ENGLISH_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@pytest.fixture(scope="module")
def examples():
    return dates.sample_dates(6000, seed=3, languages=dates.date_languages())


def test_same_seed_same_data_other_seed_other_data():
    first = dates.generate_dates(300, seed=7)
    assert first == dates.generate_dates(300, seed=7)
    assert first != dates.generate_dates(300, seed=8)
    assert dates.dates_splits(seed=1, train=200, dev=50, test=50) == dates.dates_splits(
        seed=1, train=200, dev=50, test=50
    )


def test_targets_are_iso_dates_in_range(examples):
    for example in examples:
        day = datetime.date.fromisoformat(example.target)
        assert day.isoformat() == example.target
        assert 1950 <= day.year <= 2049
        assert "\t" not in example.source and "\n" not in example.source
        assert example.source.strip() == example.source and example.source


def test_splits_are_disjoint_by_date_value():
    splits = dates.dates_splits(seed=0, train=3000, dev=300, test=300)
    assert {k: len(v) for k, v in splits.items()} == {"train": 3000, "dev": 300, "test": 300}
    days = {split: {target for _, target in pairs} for split, pairs in splits.items()}
    assert not days["train"] & days["dev"]
    assert not days["train"] & days["test"]
    assert not days["dev"] & days["test"]
    # n below the pool size: every dev date is distinct.
    assert len(days["dev"]) == 300
    # Held-out splits do not move when the training set grows.
    bigger = dates.dates_splits(seed=0, train=5000, dev=300, test=300)
    assert bigger["dev"] == splits["dev"] and bigger["test"] == splits["test"]


def test_all_languages_formats_and_cases_appear(examples):
    by_language = collections.Counter(e.language for e in examples)
    assert set(by_language) == set(dates.date_languages())
    assert min(by_language.values()) > 600  # roughly uniform over 7 languages
    used = {(e.language, e.template) for e in examples}
    expected = {(lang, t) for lang in dates.date_languages() for t in dates.date_formats(lang)}
    assert used == expected
    assert len(used) >= 50
    assert {e.case for e in examples} == {"as_is", "upper", "lower", "capitalized"}
    assert len({e.source for e in examples}) > 0.95 * len(examples)


def test_default_languages():
    assert dates.DEFAULT_LANGUAGES == ("en", "fr", "es", "de", "it", "pt")
    pairs = dates.generate_dates(50, seed=0, languages=("de",))
    assert all(re.search(r"\d", source) for source, _ in pairs)
    with pytest.raises(ValueError, match=r"unknown date language\(s\) \['xx'\]"):
        dates.generate_dates(5, languages=("en", "xx"))


def _numeric_fields(example):
    """The (placeholder, number) pairs of a purely numeric source, in writing order."""
    names = re.findall(r"\{(\w+)\}", example.template)
    if not set(names) <= {"d", "dd", "m", "mm", "yy", "yyyy"}:
        return None
    return list(zip(names, map(int, re.findall(r"\d+", example.source))))


def test_numeric_formats_follow_the_documented_conventions(examples):
    checked = collections.Counter()
    for example in examples:
        fields = _numeric_fields(example)
        if fields is None:
            continue
        day = datetime.date.fromisoformat(example.target)
        order = [name[0] for name, _ in fields]
        if example.language == "en":
            assert order == ["m", "d", "y"], example
        elif example.language in ("ja", "de") and order[0] == "y":
            assert order == ["y", "m", "d"], example
        else:
            assert order == ["d", "m", "y"], example
        for name, value in fields:
            if name == "yy":
                assert value + (2000 if value < 50 else 1900) == day.year, example
            else:
                assert value == {"d": day.day, "m": day.month, "y": day.year}[name[0]], example
        checked[example.language] += 1
    assert set(checked) == set(dates.date_languages())


def test_names_match_the_date(examples):
    march_3 = dates._Writer("en")
    assert march_3.months[2] == "March" and march_3.weekdays[2] == "Wednesday"
    english = [e for e in examples if e.language == "en" and e.case == "as_is"]
    for example in english:
        day = datetime.date.fromisoformat(example.target)
        if "{weekday}" in example.template:
            assert example.source.startswith(ENGLISH_WEEKDAYS[day.weekday()] + ","), example
        if "{month}" in example.template:
            assert day.strftime("%B") in example.source, example
        if "{dth}" in example.template:
            suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}
            assert f"{day.day}{suffix.get(day.day, 'th')}" in example.source, example
    french_firsts = [e for e in examples if e.language == "fr" and "{d1}" in e.template]
    for example in french_firsts:
        if example.target.endswith("-01"):
            assert "1er" in example.source.lower(), example


def test_two_digit_years_only_where_unambiguous():
    late = dates.sample_dates(500, seed=0, start_year=2050, end_year=2120)
    assert not [e for e in late if "{yy}" in e.template]
    assert all(2050 <= int(e.target[:4]) <= 2120 for e in late)


def test_default_splits_are_fast():
    start = time.process_time()
    splits = dates.dates_splits(seed=0)
    assert {k: len(v) for k, v in splits.items()} == {"train": 40000, "dev": 1000, "test": 1000}
    assert time.process_time() - start < 4.0  # the brief asks < 2 s; slack for slow CI


def test_write_dates_tsv_reads_back(tmp_path):
    paths = dates.write_dates_tsv(str(tmp_path), seed=5, train=100, dev=20, test=20)
    splits = dates.dates_splits(seed=5, train=100, dev=20, test=20)
    for split in ("train", "dev", "test"):
        assert paths[split] == str(tmp_path / f"{split}.tsv")
        assert read_tsv(paths[split], strict=True) == splits[split]
