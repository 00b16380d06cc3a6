"""JSON as s08 reads and writes it: finite numbers only.

Python's json module writes NaN, Infinity and -Infinity, which are not JSON, and reads them back (and
reads 1e999 as infinity). One such number in a tool input from the endpoint made every line s08 wrote
after it invalid for other programs, and every later request fail (the API refuses them), a resumed
session's included. So what arrives is read with them as null, and what s08 writes cannot hold them.

    loads(text)       json.loads where NaN, ±Infinity and numbers beyond a float's range read as null
    dumps(value, **)  json.dumps with allow_nan=False; a non-finite number that got in anyway is written as null
    finite(value)     the value with every non-finite float replaced by None (iterative: any depth)
"""

from __future__ import annotations

import json
import math


def _float(text: str):
    value = float(text)
    return value if math.isfinite(value) else None


def loads(text):
    return json.loads(text, parse_constant=lambda _name: None, parse_float=_float)


def finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if not isinstance(value, (list, dict)):
        return value
    root = [value]
    stack: list = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, float) and not math.isfinite(item):
            container[key] = None
        elif isinstance(item, (list, dict)):
            copy = list(item) if isinstance(item, list) else dict(item)     # the caller's value stays as it was
            container[key] = copy
            stack.extend((copy, k) for k in (range(len(copy)) if isinstance(copy, list) else copy))
    return root[0]


def dumps(value, **options) -> str:
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        return json.dumps(finite(value), allow_nan=False, **options)
