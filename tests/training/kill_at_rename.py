"""Runs zoo-train and SIGKILLs it at the moment a write is about to land.

    python kill_at_rename.py PATTERN [zoo-train flags...]

Every file and directory the zoo writes safely goes through a rename of a finished
temporary copy (`os.replace` / `os.rename`). Just before the first such rename whose
destination matches the regular expression PATTERN, the process sends itself SIGKILL:
the temporary copy is complete, the destination is not yet there, and nothing gets a
chance to clean up, as after `kill -9` or a power cut.
"""

import os
import re
import runpy
import signal
import sys


def kill_before(rename, pattern):
    def guarded(source, destination, *args, **kwargs):
        if pattern.search(os.fspath(destination)):
            os.kill(os.getpid(), signal.SIGKILL)
        return rename(source, destination, *args, **kwargs)

    return guarded


if __name__ == "__main__":
    pattern = re.compile(sys.argv[1])
    os.replace = kill_before(os.replace, pattern)
    os.rename = kill_before(os.rename, pattern)
    sys.argv = ["zoo-train", *sys.argv[2:]]
    runpy.run_module("recipes.train", run_name="__main__", alter_sys=True)
