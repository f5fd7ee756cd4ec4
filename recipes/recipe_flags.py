"""`--recipe NAME|PATH` and `--config.<field>=<value>` of `zoo-train`, both read by absl.

The recipe decides which fields exist and of which type, so absl must know it before it
parses the overrides. `define_config_flag(argv)` therefore lets absl read `--recipe` on its
own first (every absl syntax: `--recipe text`, `-recipe=text`, a line of a `--flagfile`),
loads that recipe from the registry, checks that each `--config.<field>` names one of its
fields (a typo gets the closest names), and then defines `--config` with ml_collections,
whose per-field flags parse each value as the field's type; absl then parses the whole
command line once, as usual.
"""

import os
import re
import sys

from absl import flags
from ml_collections import ConfigDict, config_flags

from recipes.registry import load_config, recipe_names
from zoo.cli import CommandError, close_matches, did_you_mean, flag_error_message

DEFAULT_RECIPE = "dates_bahdanau"
CONFIG_FLAG = "config"
_CONFIG_DIR = os.path.join(os.path.dirname(__file__), "configs")
_OVERRIDE = re.compile(rf"^-{{1,2}}(?:no)?{CONFIG_FLAG}\.([^=]+)")  # how ml_collections spots an override
_FIELD_COMMENT = re.compile(r"^\s+config\.(\w+) = .*?  # (.*)$")


class RecipeParser(flags.ArgumentParser):
    """An absl parser that accepts a built-in recipe name or the path of a `.py` config."""

    syntactic_help = "a recipe name or a .py config file"

    def parse(self, argument):
        if argument in recipe_names() or argument.endswith(".py") or os.sep in argument:
            return argument
        matches = close_matches(argument, recipe_names())
        suggestion = f"did you mean {' or '.join(map(repr, matches))}? " if matches else ""
        raise ValueError(f"unknown recipe {argument!r}; {suggestion}expected one of {recipe_names()} "
                         "or a path to a .py config")

    def flag_type(self):
        return "recipe"


def define_recipe_flag(default=DEFAULT_RECIPE, flag_values=flags.FLAGS, module_name=None):
    """Defines `--recipe` (validated against the registry as absl parses it) in the caller's module."""
    if module_name is None:  # absl would file it under this module; --help lists the caller's flags
        module_name = sys._getframe(1).f_globals["__name__"]
        module_name = sys.argv[0] if module_name == "__main__" else module_name
    return flags.DEFINE(
        RecipeParser(), "recipe", default, f"a recipe name ({', '.join(recipe_names())}) or a .py config file",
        flag_values=flag_values, module_name=module_name,
    )


def read_recipe(argv, flag_values=flags.FLAGS):
    """The value of `--recipe` in `argv`, parsed by absl alone (other flags are left for later).

    Raises:
      flags.Error: a bad `--recipe` value or an unreadable `--flagfile`.
    """
    alone = flags.FlagValues()
    define_recipe_flag(flag_values["recipe"].default, alone, module_name=__name__)
    alone(list(argv), known_only=True)
    return alone.recipe


def overridden_fields(argv, flag_values=flags.FLAGS):
    """The `<field>` of every `--config.<field>[=value]` in `argv` (`--flagfile`s read)."""
    return [m.group(1) for m in map(_OVERRIDE.match, flag_values.read_flags_from_files(list(argv))) if m]


def check_field(config, path):
    """Raises `CommandError` unless `path` (`field` or `a.b`) names a field of `config`."""
    node = config
    for depth, part in enumerate(path.split(".")):
        if not isinstance(node, ConfigDict) or part not in node:
            known = list(node.keys()) if isinstance(node, ConfigDict) else []
            where = "the recipe" if depth == 0 else f"field {'.'.join(path.split('.')[:depth])!r}"
            hint = did_you_mean(["--config." + m for m in close_matches(part, known)]) or (
                "; zoo-train --helpfull lists the fields"
            )
            raise CommandError(f"--config.{path}: {where} has no field {part!r}{hint}")
        node = node[part]


def load_recipe(recipe):
    """The recipe's `ConfigDict`; any failure of a user's config file as a `CommandError`."""
    try:
        return load_config(recipe)
    except ValueError as error:
        raise CommandError(str(error)) from None
    except Exception as error:  # a user's config file can fail in any way; say how, in one line
        raise CommandError(f"recipe {recipe}: {type(error).__name__}: {error}") from None


def define_config_flag(argv, flag_values=flags.FLAGS):
    """Loads the recipe named in `argv`, checks its overrides and defines `--config`.

    Returns:
      `(recipe, config)`: the recipe's name or path and its `ConfigDict`, into which absl
      puts the `--config.*` values as it parses them.

    Raises:
      CommandError: a bad `--recipe`, an unknown field, `--config` given a value itself.
    """
    try:
        recipe = read_recipe(argv, flag_values)
        fields = overridden_fields(argv, flag_values)
    except flags.Error as error:
        raise CommandError(flag_error_message(error, flag_values)) from None
    if any(re.match(rf"^-{{1,2}}{CONFIG_FLAG}(=|$)", arg) for arg in argv):
        raise CommandError("--config takes no value: choose the recipe with --recipe NAME and change one of "
                           "its fields with --config.<field>=VALUE")
    config = load_recipe(recipe)
    for path in fields:
        check_field(config, path)
    config_flags.DEFINE_config_dict(
        CONFIG_FLAG, config, "a field of the recipe: --config.batch_size=32 (--helpfull lists them)",
        flag_values=flag_values, sys_argv=list(argv),
    )
    flag_values[CONFIG_FLAG].usage_name = f"{CONFIG_FLAG}.<field>=VALUE"
    return recipe, config  # the flag's value is this very object


def field_comments(recipe):
    """`{field: comment}` from the one-line comments of the recipe's file and of `base.py`.

    `base.py`'s comment wins: it says what the field means, a recipe's why it chose the value.
    """
    paths = [recipe if recipe.endswith(".py") else os.path.join(_CONFIG_DIR, f"{recipe}.py")]
    paths.append(os.path.join(_CONFIG_DIR, "base.py"))
    comments = {}
    for path in paths:
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                comments.update(m.groups() for m in map(_FIELD_COMMENT.match, f) if m)
    return comments


def fields_help(config, recipe):
    """`--helpfull`'s list of the recipe's fields: `--config.name=value  comment`, one line each."""
    comments = field_comments(recipe)
    entries = [(f"--config.{name}={config[name] if config[name] != '' else repr('')}", comments.get(name, ""))
               for name in config.keys()]
    width = max(len(entry) for entry, _ in entries)
    lines = [f"fields of recipe {recipe} (change one with --config.<field>=VALUE):"]
    lines += [f"  {entry.ljust(width)}  {comment}".rstrip() for entry, comment in entries]
    return "\n".join(lines)
