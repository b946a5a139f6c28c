"""One-line failures for the command-line tools: any exception that reaches a tool's top
level becomes `PROG: error: MESSAGE` on stderr and exit status 1 (an xrelay.Error says what
the user can fix; anything else is labelled an internal error, with its type). `--traceback`
(or XRELAY_TRACEBACK=1) prints the whole traceback as well."""

from __future__ import annotations

import os
import sys
import traceback
from typing import NoReturn

from xrelay.errors import Error


def wants_traceback(flag: bool = False) -> bool:
    return flag or os.environ.get("XRELAY_TRACEBACK", "") not in ("", "0")


def one_line(e: BaseException) -> str:
    if isinstance(e, RecursionError):
        return "the input is nested too deeply (maximum recursion depth exceeded)"
    if isinstance(e, MemoryError):
        return "out of memory (an input or a constant is too large)"
    if isinstance(e, UnicodeDecodeError):
        return f"the input is not UTF-8 text (byte {e.start}: {e.reason})"
    text = " ".join(str(e).split()) or type(e).__name__
    if isinstance(e, Error):
        return text
    return f"internal error ({type(e).__name__}): {text}"


def fail(prog: str, e: BaseException, show_traceback: bool = False) -> NoReturn:
    if wants_traceback(show_traceback):
        traceback.print_exception(e)
    if isinstance(e, KeyboardInterrupt):
        sys.exit(130)
    print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
    sys.exit(1)
