"""Parsers for benchmark output as people paste it. Pure Python: no Django in this package.

    from benchmarks.parsers import parse_text, parse_lines, detect, choose, formats, ParseError
"""

from .base import ParseError, Parser, ParseResult, ResultSet, UnknownFormat
from .registry import PARSERS, choose, detect, formats, parse_lines, parse_text, sniff

__all__ = [
    "PARSERS", "ParseError", "ParseResult", "Parser", "ResultSet", "UnknownFormat", "choose",
    "detect", "formats", "parse_lines", "parse_text", "sniff",
]
