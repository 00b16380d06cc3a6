"""Parts of a C++ build log, the paste of issue 32's stuck session: compiler progress lines with a
warning now and then, `tokens` long each (the stand-in's count), different in every part."""

from __future__ import annotations

from standin.tokens import text_tokens


def build_log_part(part: int, tokens: int = 1_200, sep: str = "\n", of: int = 3) -> str:
    """Part `part` of `of`, about `tokens` long; `sep` joins its lines (" ; " puts it on one line, as a
    line piped to s08 must be)."""
    lines = [f"build log part {part} of {of}:"]
    i = 0
    while text_tokens(sep.join(lines)) < tokens:
        k = part * 1_000 + i
        lines.append(f"[{i % 100:3d}%] Building CXX object src/engine/CMakeFiles/engine.dir/module_{k:05d}.cpp.o")
        if i % 6 == 0:
            lines.append(f"/src/engine/module_{k:05d}.cpp:{40 + i}:12: warning: unused variable 'tmp{k}' "
                         "[-Wunused-variable]")
        i += 1
    return sep.join(lines)
