"""The source templates of the `dates` task, per language (zoo/data/dates.py writes them).

Numeric dates are month-first in English and day-first in every other language (so
"03/04/2021" reads two ways; see zoo/data/dates.py); a
template with `{yy}` is only used for years 1950-2049, where a two-digit year reads back
to exactly one year.
"""

# Placeholders: {d} 3, {dd} 03, {m} 3, {mm} 03, {yyyy} 2021, {yy} 21, {month} March,
# {mon} Mar, {weekday} Wednesday, {wkd} Wed, {dth} 3rd (English), {d1} 1er/3 (French).
TEMPLATES = {
    "en": (
        "{month} {d}, {yyyy}",
        "{month} {dth}, {yyyy}",
        "{mon} {d}, {yyyy}",
        "{mon} {dth} {yyyy}",
        "{d} {month} {yyyy}",
        "{dth} {month} {yyyy}",
        "the {dth} of {month}, {yyyy}",
        "{weekday}, {month} {d}, {yyyy}",
        "{weekday}, {d} {month} {yyyy}",
        "{wkd}, {mon} {d}, {yyyy}",
        "{m}/{d}/{yyyy}",
        "{mm}/{dd}/{yyyy}",
        "{m}/{d}/{yy}",
        "{mm}-{dd}-{yy}",
    ),
    "fr": (
        "{d1} {month} {yyyy}",
        "le {d1} {month} {yyyy}",
        "{weekday} {d1} {month} {yyyy}",
        "le {weekday} {d1} {month} {yyyy}",
        "{d} {mon} {yyyy}",
        "{wkd} {d} {mon} {yyyy}",
        "{dd}/{mm}/{yyyy}",
        "{d}/{m}/{yy}",
        "{dd}-{mm}-{yyyy}",
        "{dd}.{mm}.{yy}",
    ),
    "es": (
        "{d} de {month} de {yyyy}",
        "{weekday}, {d} de {month} de {yyyy}",
        "el {weekday} {d} de {month} de {yyyy}",
        "el {d} de {month} del {yyyy}",
        "{d} {mon} {yyyy}",
        "{d}-{mon}-{yyyy}",
        "{dd}/{mm}/{yyyy}",
        "{d}/{m}/{yy}",
        "{dd}-{mm}-{yy}",
    ),
    "de": (
        "{d}. {month} {yyyy}",
        "{weekday}, {d}. {month} {yyyy}",
        "am {d}. {month} {yyyy}",
        "{wkd}, {d}. {mon} {yyyy}",
        "{d}. {mon} {yyyy}",
        "{dd}.{mm}.{yyyy}",
        "{dd}.{mm}.{yy}",
        "{d}.{m}.{yyyy}",
        "{yyyy}-{mm}-{dd}",
    ),
    "it": (
        "{d} {month} {yyyy}",
        "il {d} {month} {yyyy}",
        "{weekday} {d} {month} {yyyy}",
        "{wkd} {d} {mon} {yyyy}",
        "{d} {mon} {yyyy}",
        "{dd}/{mm}/{yyyy}",
        "{dd}/{mm}/{yy}",
        "{d}-{m}-{yyyy}",
    ),
    "pt": (
        "{d} de {month} de {yyyy}",
        "{weekday}, {d} de {month} de {yyyy}",
        "{d} de {mon} de {yyyy}",
        "{wkd}, {d} {mon} {yyyy}",
        "{dd}/{mm}/{yyyy}",
        "{d}/{m}/{yy}",
        "{dd}-{mm}-{yyyy}",
    ),
    "ja": (
        "{yyyy}年{m}月{d}日",
        "{yyyy}年{m}月{d}日({wkd})",
        "{yyyy}年{m}月{d}日{weekday}",
        "{yyyy}/{mm}/{dd}",
    ),
}
