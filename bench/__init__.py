"""Benchmarks and load generators, each figure beside a floor measured in the same run."""

import re

_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")


def plain(doc: str | None, *, first_paragraph: bool = False) -> str | None:
    """A docstring (or its first paragraph) as ``--help`` text: its cross-references
    and literals, marked up for the code's readers, as the words they stand for."""
    if doc is None:
        return None
    if first_paragraph:
        doc = doc.split("\n\n")[0]
    text = _ROLE.sub(lambda m: m[2].rsplit(".", 1)[-1] if m[1] else m[2], doc)
    return re.sub(r"`+([^`]+?)`+", r"\1", text).replace("::\n", ":\n")
