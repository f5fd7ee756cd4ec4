"""`dates`: a built-in translation task from human-written dates to ISO 8601.

Sources are dates as people write them in several languages ("3 de marzo de 2021",
"March 3rd, 2021", "Mittwoch, 3. März 2021", "03.03.21", "3/3/2021"); the target is always
`YYYY-MM-DD`. Nothing is downloaded: month and weekday names come from Babel (CLDR), the
dates and formats from a seeded `random.Random`, so a seed gives the same data on every run.

Conventions:
- Numeric dates are month-first in English (US usage: "3/4/2021" is March 4) and
  day-first in every other language ("3/4/2021" is 3 April in French). The source does
  not say its language, so a numeric date whose day is 12 or less and not its month
  ("03/04/2021", "3/4/60", "06-09-78") has two readings, and its target is the one of
  the language drawn: about 7% of the sources (69 of seed 0's 1000 dev pairs), which
  keeps exact match below 100% whatever the model.
- Two-digit years: 00-49 mean 20xx and 50-99 mean 19xx; they are only used for dates in
  1950-2049, where that rule is exact.
- A weekday, when written, is the true weekday of the date.
- Cases vary: as written by CLDR (mostly), all upper case, all lower case, or with the
  first letter capitalized.

The task needs reordering: the year moves to the front and, for day-first formats, the
day goes last; month names map to numbers and weekdays are dropped. A few formats
(German DIN `2021-03-03`, Japanese `2021年3月3日`) are already year-first.

`dates_splits` keeps the splits apart by date value: a date seen in training (in any
language or format) never appears in dev or test.
"""

import dataclasses
import datetime
import os
import random

from babel import dates as babel_dates

from zoo.data.date_templates import TEMPLATES
from zoo.data.tsv import write_tsv

DEFAULT_LANGUAGES = ("en", "fr", "es", "de", "it", "pt")

_CASES = ("as_is", "upper", "lower", "capitalized")
_CASE_WEIGHTS = (0.76, 0.1, 0.08, 0.06)
_TWO_DIGIT_YEARS = (1950, 2049)  # the years a two-digit year reads back to exactly


@dataclasses.dataclass(frozen=True)
class DateExample:
    """One generated pair and how it was written (for tests and error analysis)."""

    source: str
    target: str
    language: str
    template: str
    case: str


def date_languages():
    """The languages `generate_dates` can write."""
    return tuple(TEMPLATES)


def date_formats(language):
    """The source templates of a language, e.g. `"{d} de {month} de {yyyy}"`."""
    _check_languages((language,))
    return TEMPLATES[language]


class _Writer:
    """Writes one date in one language; month/weekday names from Babel, looked up once."""

    def __init__(self, language):
        self.language = language
        self.months = _names(babel_dates.get_month_names, "wide", language, range(1, 13))
        self.mons = _names(babel_dates.get_month_names, "abbreviated", language, range(1, 13))
        # Babel numbers weekdays like datetime.date.weekday(): 0 is Monday.
        self.weekdays = _names(babel_dates.get_day_names, "wide", language, range(7))
        self.wkds = _names(babel_dates.get_day_names, "abbreviated", language, range(7))
        self.templates = TEMPLATES[language]
        self.templates_4digit = tuple(t for t in self.templates if "{yy}" not in t)

    def write(self, date, rng):
        lo, hi = _TWO_DIGIT_YEARS
        templates = self.templates if lo <= date.year <= hi else self.templates_4digit
        template = templates[rng.randrange(len(templates))]
        case = rng.choices(_CASES, _CASE_WEIGHTS)[0]
        weekday = date.weekday()
        text = template.format(
            d=date.day,
            dd=f"{date.day:02d}",
            m=date.month,
            mm=f"{date.month:02d}",
            yyyy=f"{date.year:04d}",
            yy=f"{date.year % 100:02d}",
            month=self.months[date.month - 1],
            mon=self.mons[date.month - 1],
            weekday=self.weekdays[weekday],
            wkd=self.wkds[weekday],
            dth=_english_ordinal(date.day),
            d1="1er" if date.day == 1 else str(date.day),
        )
        if case == "upper":
            text = text.upper()
        elif case == "lower":
            text = text.lower()
        elif case == "capitalized":
            text = text[:1].upper() + text[1:]
        return DateExample(text, date.isoformat(), self.language, template, case)


def _names(getter, width, language, keys):
    names = getter(width, context="format", locale=language)
    return [names[key] for key in keys]


def _english_ordinal(day):
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _check_languages(langs):
    if not langs:
        raise ValueError("expected at least one language, got none")
    unknown = [lang for lang in langs if lang not in TEMPLATES]
    if unknown:
        raise ValueError(f"unknown date language(s) {unknown}, expected some of {list(TEMPLATES)}")


def _day_range(start_year, end_year):
    if not start_year <= end_year:
        raise ValueError(f"expected start_year <= end_year, got {start_year} > {end_year}")
    first = datetime.date(start_year, 1, 1).toordinal()
    last = datetime.date(end_year, 12, 31).toordinal()
    return list(range(first, last + 1))


def _sample(n, days, langs, rng):
    """n examples whose dates cycle through `days` in shuffled passes (so n <= len(days)
    gives n distinct dates), each in a random language, format and case."""
    if n < 0:
        raise ValueError(f"expected a number of examples >= 0, got {n}")
    writers = [_Writer(lang) for lang in langs]
    examples = []
    pool = []
    while len(examples) < n:
        if not pool:
            pool = list(days)
            rng.shuffle(pool)
        date = datetime.date.fromordinal(pool.pop())
        examples.append(writers[rng.randrange(len(writers))].write(date, rng))
    return examples


def sample_dates(n, seed=0, languages=DEFAULT_LANGUAGES, start_year=1950, end_year=2049):
    """n `DateExample`s with dates drawn from `start_year`-01-01 to `end_year`-12-31."""
    _check_languages(tuple(languages))
    rng = random.Random(f"dates/{seed}")
    return _sample(n, _day_range(start_year, end_year), tuple(languages), rng)


def generate_dates(n, seed=0, languages=DEFAULT_LANGUAGES, start_year=1950, end_year=2049):
    """n (source, target) pairs: a human-written date and its ISO 8601 `YYYY-MM-DD`.

    Args:
      n: number of pairs.
      seed: the same seed gives the same pairs.
      languages: any of `zoo.data.dates.date_languages()`.
      start_year, end_year: the range of dates (inclusive).

    Returns:
      list of (source, target) str pairs.
    """
    return [(e.source, e.target) for e in sample_dates(n, seed, languages, start_year, end_year)]


def dates_splits(
    seed=0,
    train=40000,
    dev=1000,
    test=1000,
    languages=DEFAULT_LANGUAGES,
    start_year=1950,
    end_year=2049,
    held_out_fraction=0.05,
):
    """Train/dev/test pairs whose dates are disjoint across splits.

    The days of the range are shuffled once; `held_out_fraction` of them are kept for dev,
    as many for test, the rest for train. Each split then writes its own days in random
    languages and formats. Dev and test do not depend on `train` (nor test on `dev`).

    Returns:
      {"train": [(source, target), ...], "dev": [...], "test": [...]}.
    """
    _check_languages(tuple(languages))
    if not 0 < held_out_fraction < 0.5:
        raise ValueError(f"expected 0 < held_out_fraction < 0.5, got {held_out_fraction}")
    days = _day_range(start_year, end_year)
    random.Random(f"dates/{seed}/days").shuffle(days)
    held_out = max(1, int(len(days) * held_out_fraction))
    pools = {
        "dev": days[:held_out],
        "test": days[held_out : 2 * held_out],
        "train": days[2 * held_out :],
    }
    if not pools["train"]:
        raise ValueError(f"the years {start_year}-{end_year} leave no day for training")
    sizes = {"train": train, "dev": dev, "test": test}
    splits = {}
    for split in ("train", "dev", "test"):
        # One generator per split: dev and test stay the same whatever the size of train.
        rng = random.Random(f"dates/{seed}/{split}")
        examples = _sample(sizes[split], pools[split], tuple(languages), rng)
        splits[split] = [(e.source, e.target) for e in examples]
    return splits


def write_dates_tsv(directory, seed=0, **split_kwargs):
    """Writes `train.tsv`, `dev.tsv`, `test.tsv` of `dates_splits(seed, **split_kwargs)`.

    Returns:
      {"train": path, "dev": path, "test": path}.
    """
    os.makedirs(directory, exist_ok=True)
    splits = dates_splits(seed=seed, **split_kwargs)
    return {
        split: write_tsv(os.path.join(directory, f"{split}.tsv"), pairs)
        for split, pairs in splits.items()
    }
