"""Textual IR in and out: the context with every dialect xrelay knows, a parser that records
each op's source location, and a verifier whose failures are one-line diagnostics
`file:line:col: error: 'op.name' message` naming the failing op.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import func, get_all_dialects, llvm
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, NameLoc, StringAttr, UnknownLoc
from xdsl.ir import Dialect, Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.exceptions import ParseError as XDSLParseError
from xrelay.dialects import DIALECTS
from xrelay.dialects.arith_extras import arith_with_extras
from xrelay.dialects.tensor_extras import tensor_with_fixes
from xrelay.errors import ParseError, VerificationError


def dialect_factories() -> dict[str, Callable[[], Dialect]]:
    """xDSL's dialects and xrelay's, arith with the upstream ops xDSL lacks."""
    return {
        **get_all_dialects(),
        **DIALECTS,
        "arith": arith_with_extras,
        "tensor": tensor_with_fixes,
    }


def make_context() -> Context:
    """A context that knows xDSL's dialects and xrelay's (loaded lazily)."""
    ctx = Context()
    for name, factory in dialect_factories().items():
        ctx.register_dialect(name, factory)
    return ctx


class LocatingParser(Parser):
    """An xDSL parser that gives every op without an explicit `loc(...)` the file location
    where it starts, and reports a constraint failure met while parsing an op at that op."""

    line_offset: int = 0

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except VerifyException as e:
            self.raise_error(str(e), start)
        except (NotImplementedError, ValueError, OverflowError, struct.error) as e:
            # xDSL's own failures on well-formed text it cannot represent (an array<i69>)
            self.raise_error(f"cannot represent this op: {e}", start)
        if isinstance(op.location, UnknownLoc):
            loc = start.get_location()
            op.location = FileLineColLoc(
                StringAttr(loc.file), IntAttr(loc.line + self.line_offset), IntAttr(loc.col)
            )
        return op


_STRING_ENDS = "\n\v\f"  # what a string literal cannot contain unescaped
_HEX = "0123456789abcdefABCDEF"


def bad_string(text: str) -> tuple[int, int, str] | None:
    """(line, column, message), 1-based, of the first string literal that is not closed on
    its line or holds an escape other than \\n \\t \\\\ \\" or two hex digits; None if all are
    well formed. `//` comments are skipped. Linear in the text: xDSL's lexer matches string
    literals with a regex that backtracks exponentially on these (a 40-character one did
    not finish in minutes)."""
    line, start, i, n = 1, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line, start = line + 1, i + 1
        elif c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] not in _STRING_ENDS:
                if text[j] != "\\":
                    j += 1
                elif j + 1 < n and text[j + 1] in 'nt"\\':
                    j += 2
                elif j + 2 < n and text[j + 1] in _HEX and text[j + 2] in _HEX:
                    j += 3
                else:
                    return line, j - start + 1, "invalid escape in a string literal"
            if j >= n or text[j] != '"':
                return line, i - start + 1, "string literal is not closed on its line"
            i = j
        i += 1
    return None


def parse_module(
    text: str | bytes, filename: str = "<string>", ctx: Context | None = None, line_offset: int = 0
) -> ModuleOp:
    """Parse textual IR (custom or generic form) into a module; raises `xrelay.ParseError`
    with `file:line:col: error: message` on bad input. The module is not verified."""
    source = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    bad = bad_string(source)
    if bad is not None:  # before xDSL's lexer, which backtracks exponentially on it
        line, col, message = bad
        raise ParseError(f"{filename}:{line + line_offset}:{col}: error: {message}")
    try:
        # the parser reads the first token as it is made: a bad one raises here
        parser = LocatingParser(ctx or make_context(), text, filename)
        parser.line_offset = line_offset
        return parser.parse_module()
    except XDSLParseError as e:
        loc = e.span.get_location()
        raise ParseError(f"{loc.file}:{loc.line + line_offset}:{loc.col}: error: {e.msg}") from None


def location_str(op: Operation) -> str:
    """`file:line:col`, the NameLoc name, or the op name when the op has no location."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    if isinstance(loc, NameLoc):
        return loc.desc.data
    return f"<{op.name}>"


def _root_message(e: BaseException) -> str:
    """The innermost verifier message (xDSL wraps it with the printed module)."""
    while isinstance(e, DiagnosticException) and e.__cause__ is not None:
        e = e.__cause__
    text = str(e).strip()
    return text.removeprefix("Operation does not verify: ")


def _check_call(op: Operation, symbols: dict[str, Operation]) -> None:
    """A direct call names a function of the module (the symbol check xDSL's verifier does
    with a linear scan of the module per call, quadratic in a model of many kernels)."""
    callee = op.callee  # type: ignore[attr-defined]
    name = callee.root_reference.data if callee is not None else None
    if name is not None and name not in symbols:
        raise VerifyException(f"'{name}' does not reference a function in this module")


def verify_module(module: Operation) -> None:
    """Verify `module` op by op, innermost scope last; raises `xrelay.VerificationError`
    naming the first failing op's location and name."""
    symbols = {
        op.sym_name.data: op
        for op in (module.regions[0].ops if module.regions else [])
        if isinstance(getattr(op, "sym_name", None), StringAttr)
    }
    for op in module.walk():
        try:
            if isinstance(op, func.CallOp | llvm.CallOp):
                _check_call(op, symbols)
            else:
                op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException) as e:
            message = _root_message(e).removeprefix(f"'{op.name}' ")
            raise VerificationError(
                f"{location_str(op)}: error: '{op.name}' op {message}"
            ) from None
