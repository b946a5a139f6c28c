"""Split a linked LLVM module (its text, as LLVM prints it) into parts that compile
independently: each part defines some of the functions and declares the rest, so the parts'
object files link into the same program. `build` compiles the parts at once, one per
core (lowering/compile_worker.py): optimization and code generation are per function,
and they were half of ResNet-50's build time on one core.

What stays together: a function or mutable global with internal linkage and everything
that refers to it (so no linkage changes and no cross-part inlining is lost: the kernels
reach each other only through external symbols). The largest groups (the GEMM's runtime,
a large main) are parts of their own; the others are spread over the remaining parts,
longest text first to the lightest part. Each part holds copies of the internal constants it refers to,
declarations of what it calls elsewhere, its attribute groups renumbered in order of use
(so the GEMM runtime's part is the same text in every model that has it, and
compile_worker's cache serves it), and the last part defines the mutable external globals
(thread count, arenas), which the others declare `external global`.

The object files use absolute addresses (compile_worker.target_machine): MCJIT links
position-independent objects' GOT-relative references against the first object's GOT.
"""

from __future__ import annotations

import re

_NAME = r"@[-a-zA-Z$._0-9]+|@\"[^\"]*\""
_SYMBOL = re.compile(_NAME)
_GLOBAL = re.compile(rf"^({_NAME}) = (.*)$")
_DEFINE = re.compile(rf"^define (.*?)({_NAME})\((.*)\)(.*)\{{$")
_PARAM_NAME = re.compile(r" %[-a-zA-Z$._0-9]+(?=,|$)")
_LINKAGE = {"internal", "private", "dso_local", "hidden", "protected", "external"}
LARGE = 64 * 1024  # characters: a group this long is a part of its own (main, the runtime)


class _Item:
    """A top-level definition: its name, text, whether other parts may see it."""

    def __init__(self, name: str, text: str, internal: bool) -> None:
        self.name = name
        self.text = text
        self.internal = internal
        self.refs = {m for m in _SYMBOL.findall(text) if m != name}


def _parse(text: str) -> tuple[list[str], list[_Item], list[_Item], list[str]]:
    """(the module's header lines, its global variables, its function definitions, the
    declarations, attribute groups and metadata after them)."""
    header: list[str] = []
    globals_: list[_Item] = []
    functions: list[_Item] = []
    trailer: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("define "):
            m = _DEFINE.match(line)
            if m is None:
                raise ValueError(f"unexpected function header: {line[:120]}")
            j = lines.index("}", i)
            body = "\n".join(lines[i : j + 1])
            linkage = set(m.group(1).split())
            functions.append(_Item(m.group(2), body, bool(linkage & {"internal", "private"})))
            i = j + 1
            continue
        g = _GLOBAL.match(line)
        if g is not None:
            words = g.group(2).split()
            if "alias" in words or "ifunc" in words:
                raise ValueError("aliases: not split")
            internal = bool(words) and words[0] in ("internal", "private")
            globals_.append(_Item(g.group(1), line, internal))
        elif line.startswith(("declare ", "attributes ")):
            trailer.append(line)
        elif line.startswith("!"):
            raise ValueError("metadata: not split")
        elif not globals_ and not functions:
            header.append(line)
        elif line.strip() and not line.startswith(";"):
            raise ValueError(f"unexpected top-level line: {line[:120]}")
        i += 1
    return header, globals_, functions, trailer


def _declaration(fn: _Item) -> str:
    """`declare` for a function defined in another part."""
    m = _DEFINE.match(fn.text.split("\n", 1)[0])
    assert m is not None
    prefix = " ".join(w for w in m.group(1).split() if w not in _LINKAGE)
    params = ",".join(_PARAM_NAME.sub("", p) for p in m.group(3).split(","))
    return f"declare {prefix} {fn.name}({params})"


def _external(g: _Item) -> str:
    """`@g = external global <type>` for a global defined in another part."""
    words = g.text.split(" = ", 1)[1].split()
    while words and words[0] in _LINKAGE | {"local_unnamed_addr", "unnamed_addr"}:
        words = words[1:]
    kind = words[0]  # global or constant
    rest = " ".join(words[1:])
    # the type is everything before the initializer: bracket-balanced
    depth, end = 0, len(rest)
    for k, ch in enumerate(rest):
        if ch in "[{<(":
            depth += 1
        elif ch in "]}>)":
            depth -= 1
        elif ch == " " and depth == 0:
            end = k
            break
    return f"{g.name} = external {kind} {rest[:end]}"


def split_module(text: str, parts: int) -> list[str]:
    """The module as modules that link into the same program (the whole text when it
    cannot usefully be split, or `parts` < 2). The largest group of functions and every
    other of LARGE characters or more (the GEMM's runtime, a large main) are parts of
    their own, so the runtime's part is the same text from model to model (compile_worker
    caches object code by text); the others are spread over `parts` - 1 more. A part
    holds what its functions refer to: the constants, declarations and attribute groups
    (renumbered in order of use); the module's mutable external globals are defined in the
    last part only."""
    if parts < 2:
        return [text]
    try:
        header, globals_, functions, trailer = _parse(text)
    except ValueError:
        return [text]  # text this splitter does not know: compiled whole
    by_name = {it.name: it for it in globals_ + functions}
    sticky = {g.name for g in globals_ if g.internal and not _is_constant(g)}
    parent = {name: name for name in [fn.name for fn in functions] + sorted(sticky)}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for item in functions + [g for g in globals_ if g.name in sticky]:
        for ref in item.refs:
            # an internal function or mutable global shares its users' part; a sticky
            # global shares the part of what it points to (@xr_main_ref = ... @main)
            if ref in parent and (by_name[ref].internal or item.name in sticky):
                parent[find(ref)] = find(item.name)
    groups: dict[str, list[_Item]] = {}
    for fn in functions:
        groups.setdefault(find(fn.name), []).append(fn)
    if len(groups) < 2:
        return [text]
    ranked = sorted(((sum(len(f.text) for f in g), g) for g in groups.values()),
                    key=lambda sg: -sg[0])  # fmt: skip
    # the largest group, and any other of LARGE characters or more, are parts of their own;
    # the rest share `parts` - 1 parts
    alone = 1
    while alone < len(ranked) and ranked[alone][0] >= LARGE:
        alone += 1
    bins: list[list[_Item]] = [list(g) for _, g in ranked[:alone]]
    bins += [[] for _ in range(min(parts - 1, len(ranked) - alone))]
    loads = [0] * len(bins)
    for size, group in ranked[alone:]:  # longest first, each to the lightest shared part
        k = alone + loads[alone:].index(min(loads[alone:]))
        bins[k].extend(group)
        loads[k] += size
    declarations = {_declared_name(line): line for line in trailer if line.startswith("declare ")}
    attributes = [line for line in trailer if line.startswith("attributes ")]
    # each part's definitions by name: its text does not depend on where the linker put them
    return [
        _part(header, globals_, by_name, sorted(b, key=lambda f: f.name),
              declarations, attributes, home=k == len(bins) - 1)
        for k, b in enumerate(bins)
    ]  # fmt: skip


def _is_constant(g: _Item) -> bool:
    words = g.text.split(" = ", 1)[1].split()
    return next((w for w in words if w in ("global", "constant")), "") == "constant"


def _declared_name(line: str) -> str:
    m = _SYMBOL.search(line)
    assert m is not None
    return m.group(0)


_ATTR_REF = re.compile(r"#(\d+)\b")


def _part(
    header: list[str],
    globals_: list[_Item],
    by_name: dict[str, _Item],
    members: list[_Item],
    declarations: dict[str, str],
    attributes: list[str],
    home: bool,
) -> str:
    """One part's text: `members` defined, what they refer to declared or copied."""
    defined = {fn.name for fn in members}
    needed: set[str] = set()
    todo = [ref for fn in members for ref in fn.refs]
    while todo:  # constants may refer to other constants
        ref = todo.pop()
        if ref in needed:
            continue
        needed.add(ref)
        item = by_name.get(ref)
        if item is not None and item.text.startswith("@") and item.internal:
            todo.extend(item.refs)
    lines = list(header)
    for g in sorted(globals_, key=lambda g: g.name):
        if g.internal:  # a constant (a copy in each part) or a mutable one of this group
            if g.name in needed or g.name in defined:
                lines.append(g.text)
        elif home:
            lines.append(g.text)
        elif g.name in needed:
            lines.append(_external(g))
    lines.append("")
    body = []
    for fn in members:
        body.append(fn.text)
        body.append("")
    for name in sorted(needed - defined):
        item = by_name.get(name)
        if item is not None and not item.text.startswith("@"):
            body.append(_declaration(item))
        elif name in declarations:
            body.append(declarations[name])
    # attribute groups renumbered in order of use, so a part's text does not depend on
    # the rest of the module
    numbers: dict[str, str] = {}

    def renumber(m: re.Match[str]) -> str:
        return "#" + numbers.setdefault(m.group(1), str(len(numbers)))

    text = _ATTR_REF.sub(renumber, "\n".join(body))
    groups = {_ATTR_REF.match(line.split()[1]).group(1): line for line in attributes}  # type: ignore[union-attr]
    tail = [
        f"attributes #{new} = {groups[old].split(' = ', 1)[1]}"
        for old, new in sorted(numbers.items(), key=lambda kv: int(kv[1]))
        if old in groups
    ]
    return "\n".join([*lines, text, *tail]) + "\n"
