r"""A shell command line read by tree-sitter's bash grammar: its simple commands, each one's words and
redirections, and what surrounds them. The bash guard (tools/bash_guard.py) and the approval policy
(approvals/policy.py, approvals/read_only.py) both read commands through `parse`; neither splits
words itself.

    cd src && uniq u/?.txt >/dev/null 2>&1; while true; do sleep 1 & done
    → Simple(words=["cd", "src"])
      Simple(words=["uniq", "u/?.txt"], glob=[False, True], redirects=[> /dev/null, 2>&1])
      Simple(words=["true"], in_loop=True), Simple(words=["sleep", "1"], in_loop=True, background=True)
      Script.background_in_loop = True

Words come with quotes removed where bash would take them literally; a word that holds an
expansion (`$X`, `${X}`, `$'…'`, a brace list, `$((…))`) or a substitution (`$(…)`, `` `…` ``,
`<(…)`) is marked not literal, and its text keeps the expansion as written (`"$HOME"/` → `$HOME/`).
Where the grammar splits what bash reads as one word (`-\<newline>o`, `'a'\ b`, `$"x"`) the
pieces are joined again; other text the grammar skipped between words is not judged. Redirections
keep their descriptor, operator and target; a here-document its body; here-documents and
here-strings are listed as redirections. The grammar hangs a redirection written after the last
command of a list or pipeline (`a && b >f`) on the whole list: each of its commands gets it here,
which only makes the policy stricter and the guard more watchful.

What the grammar could not read (ERROR, a missing token) sets `errors`. Constructs the policy does
not judge are named in `constructs` (function, case, select, arithmetic, [[, substitution, nodes of
a kind not known here); a job put in the background inside a loop sets `background_in_loop`. The
policy asks about all of these; the guard ignores them and looks at every command that could run:
the commands inside substitutions, function bodies, loops and here-document pipelines are listed
too, each with its context. The walk keeps its own stack: deep nesting costs no recursion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

GLOB_CHARS = "*?["
PLAIN_SKIP = re.compile(r"[\\*?\[{]")
ESCAPES = re.compile(rb"(\\.)+", re.DOTALL)
LEAVES = re.compile(r"(?<![\w-])(break|exit|return)(?![\w-])")
_PARSER = Parser(Language(tree_sitter_bash.language()))
# tree-sitter-bash 0.25 can crash the process (a segfault, seen with `{` followed by U+E0000) on some
# non-ASCII characters. bash's metacharacters are all ASCII, so every byte >= 0x80 is part of a word
# to bash: the grammar is given the same bytes with each of those as `a`, which keeps every offset,
# and the words are read from the real bytes.
_ASCII_FOR_GRAMMAR = bytes(range(128)) + b"a" * 128
OUTPUT_OPS = {">", ">>", ">|", "&>", "&>>"}
EXPANSIONS = {"simple_expansion", "expansion", "arithmetic_expansion", "brace_expression", "ansi_c_string",
              "translated_string", "extglob_pattern", "$"}
SUBSTITUTIONS = {"command_substitution", "process_substitution"}
PLAIN_LEAVES = {"number", "test_operator", "variable_name", "special_variable_name", "file_descriptor"}
REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
LOOPS = {"while_statement", "for_statement", "c_style_for_statement"}
RESERVED = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "select", "in", "case",
            "esac", "function", "coproc", "time", "!", "{", "}", "[[", "]]"}      # never a program of its own


@dataclass(frozen=True)
class Word:
    text: str                 # quotes removed; an expansion or substitution kept as written
    literal: bool = True      # no expansion or substitution: `text` is what the program gets (before globbing)
    glob: bool = False        # an unquoted *, ? or [: bash may put file names in its place
    lead_glob: bool = False   # it starts with one: may become a name that starts with "-"


@dataclass(frozen=True)
class Redirect:
    op: str                   # < > >> >| &> &>> <& >& <> <&- >&- << <<- <<<
    fd: int | None = None     # the descriptor written in front of the operator (None: the default one)
    target: Word | None = None
    body: str = ""            # a here-document's text
    body_literal: bool = True  # its delimiter was quoted, or it holds no expansion


@dataclass
class Simple:
    """One simple command. `words[i]` with `opaque[i]` (not literal), `glob[i]`, `lead_glob[i]`."""
    words: list[str] = field(default_factory=list)
    opaque: list[bool] = field(default_factory=list)
    glob: list[bool] = field(default_factory=list)
    lead_glob: list[bool] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)      # its own and those of enclosing blocks
    assignments: list[str] = field(default_factory=list)         # NAME=value in front of it
    header: bool = False          # the `for NAME in WORDS` of a loop: sets a variable, runs nothing
    scope: tuple = ()             # the subshells it runs in: a `cd` ends with them
    in_loop: bool = False
    background: bool = False      # it (or the block it is in) ends with `&`
    in_pipeline: bool = False
    pipe_from: int | None = None  # `id` of the command whose output it reads through a pipe
    function: str = ""            # the function whose body it is in
    id: int = 0

    def add(self, word: Word) -> None:
        self.words.append(word.text)
        self.opaque.append(not word.literal)
        self.glob.append(word.glob)
        self.lead_glob.append(word.lead_glob)


@dataclass
class Loop:
    keyword: str                  # while, until, for, select
    condition: list[str]          # the words of a while/until condition when it is one simple command
    background: bool = False      # its body starts jobs in the background
    leaves: bool = False          # its body holds break, exit or return


@dataclass
class Script:
    commands: list[Simple] = field(default_factory=list)
    constructs: set[str] = field(default_factory=set)    # what the policy does not judge
    errors: bool = False          # the grammar could not read part of it
    background_in_loop: bool = False
    loops: list[Loop] = field(default_factory=list)


class _Ctx(NamedTuple):
    scope: tuple = ()
    loop: Loop | None = None
    function: str = ""
    redirects: tuple = ()
    background: bool = False
    in_pipeline: bool = False
    pipe_from: int | None = None


def parse(command: str) -> Script:
    """The command line as the grammar reads it. Linear in its length (tree-sitter is; the walk here
    keeps its own stack, so deep nesting costs no recursion)."""
    source = command.encode("utf-8", "surrogatepass")
    tree = _PARSER.parse(source.translate(_ASCII_FOR_GRAMMAR))
    script = Script(errors=tree.root_node.has_error)
    _Walker(source, script).run(tree.root_node)
    return script


def _text(source: bytes, node: Node) -> str:
    return _decode(source[node.start_byte:node.end_byte])


def _decode(piece: bytes) -> str:
    """A piece of the command as text. The grammar may end a piece inside a character (an escape of
    a non-ASCII one, `\\é`): its bytes then become U+FFFD, which no name or path s08 trusts contains."""
    try:
        return piece.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return piece.decode("utf-8", "replace")


def _unescape_bare(text: str) -> list[tuple[str, bool]]:
    """An unquoted word's pieces: (text, quoted) — a backslash quotes the character after it."""
    if "\\" not in text:
        return [(text, False)]
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append((text[i + 1], True))
            i += 2
        else:
            out.append((text[i], False))
            i += 1
    return out


def _unescape_double(text: str) -> str:
    """Inside "…" a backslash quotes only $ ` " \\ and a newline."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


class _Walker:
    def __init__(self, source: bytes, script: Script):
        self.source, self.script = source, script
        self.stack: list[tuple[Node, _Ctx]] = []

    def text(self, node: Node) -> str:
        return _text(self.source, node)

    # ---- words -----------------------------------------------------------------------------------

    def _pieces(self, node: Node, ctx: _Ctx, out: list) -> bool:
        """Append (text, quoted, literal) pieces of a word node; push the substitutions it holds.
        Returns False when something in it is not literal."""
        kind = node.type
        if kind == "word":
            out.extend((t, q, True) for t, q in _unescape_bare(self.text(node)))
            return True
        if kind in PLAIN_LEAVES:
            out.append((self.text(node), False, True))
            return True
        if kind == "raw_string":
            out.append((self.text(node)[1:-1], True, True))
            return True
        if kind == "concatenation":
            literal = True
            for child in node.children:
                literal &= self._pieces(child, ctx, out)
            return literal
        if kind == "string":
            literal = True
            for child in node.children:
                if child.type == '"':
                    continue
                if child.type == "string_content":
                    out.append((_unescape_double(self.text(child)), True, True))
                else:
                    literal = False
                    out.append((self.text(child), True, False))
                    self._substitutions(child, ctx)
            return literal
        out.append((self.text(node), kind not in EXPANSIONS and kind not in SUBSTITUTIONS, False))
        self._substitutions(node, ctx)
        if kind not in EXPANSIONS:
            self.script.constructs.add("substitution" if kind in SUBSTITUTIONS else f"word {kind}")
        return False

    def _substitutions(self, node: Node, ctx: _Ctx) -> None:
        """Push the command and process substitutions inside `node`: their commands run too."""
        todo = [node]
        while todo:
            n = todo.pop()
            if n.type in SUBSTITUTIONS:
                self.script.constructs.add("substitution")
                self.stack.append((n, ctx._replace(scope=ctx.scope + (n.id,), pipe_from=None, in_pipeline=False)))
            else:
                todo.extend(n.children)

    def word(self, nodes: list, ctx: _Ctx) -> Word:
        """One word from its nodes (and the escaped characters the grammar left between them)."""
        if len(nodes) == 1 and nodes[0].type in ("word", "number"):
            text = self.text(nodes[0])
            if not PLAIN_SKIP.search(text):             # the common case: nothing to remove or expand
                return Word(text)
        pieces: list = []
        literal = True
        for node in nodes:
            if isinstance(node, str):
                pieces.extend((t, q, True) for t, q in _unescape_bare(node))
            else:
                literal &= self._pieces(node, ctx, pieces)
        text = "".join(t for t, _, _ in pieces)
        bare = "".join("\0" * len(t) if q else t for t, q, _ in pieces)
        if "{" in bare and "}" in bare and ("," in bare or ".." in bare):
            literal = False                          # a brace list: one word becomes several
        glob = any(c in bare for c in GLOB_CHARS)
        return Word(text, literal, glob, bare.startswith(tuple(GLOB_CHARS)))

    def words(self, nodes: list[Node], ctx: _Ctx, others: tuple = ()) -> list[Word | None]:
        """Words from nodes in source order; `others` are the (start, end) spans of what stands between
        them (redirections, assignments). Nodes that touch, or are joined by a line continuation
        (`-\\<newline>o`) or an escaped character the grammar skipped (`'a'\\ "b"`), are one word to
        bash even where the grammar splits them; any other text between them is not judged."""
        spans = sorted([(n.start_byte, n.end_byte, n) for n in nodes] + [(a, b, None) for a, b in others],
                       key=lambda span: span[0])
        groups: list[list] = []
        previous = None
        for start, end, node in spans:
            gap = self.source[previous[1]:start].replace(b"\\\n", b"") if previous else b""
            if b"\n" in gap and groups and node is not None:
                # bash ends a command at a bare newline; the grammar sometimes reads on past it
                # (`ls && ls | ls | ls<newline>rm f` as one `ls rm f`): what follows is a command of its own
                self.script.constructs.add("a newline inside one command")
                groups.append([])
            elif previous and gap and not gap.isspace() and not ESCAPES.fullmatch(gap):
                self.script.constructs.add("text between words")
            joined = previous is not None and previous[2] is not None and node is not None and \
                (not gap or ESCAPES.fullmatch(gap))
            if joined:
                groups[-1] += [_decode(gap), node] if gap else [node]
            elif node is not None:
                groups.append([node])
            previous = (start, max(end, previous[1]) if previous else end, node)
        return [self.word(group, ctx) if group else None for group in groups]

    # ---- redirections ----------------------------------------------------------------------------

    def redirect(self, node: Node, ctx: _Ctx, extra: list[Node], current: int) -> list[Redirect]:
        """The redirections a redirect node holds (a here-document may carry more); words the grammar
        hung on a redirection that bash gives the command as arguments go to `extra`."""
        fd_node = node.child_by_field_name("descriptor")
        fd = int(self.text(fd_node)) if fd_node is not None and self.text(fd_node).isdigit() else None
        ops = [c.type for c in node.children if not c.is_named and c.type not in ("(", ")")]
        op = ops[0] if ops else "?"
        if node.type == "herestring_redirect":
            targets = [c for c in node.named_children if c.type not in ("file_descriptor",)]
            return [Redirect("<<<", fd, self.word(targets[:1], ctx) if targets else None)]
        if node.type == "heredoc_redirect":
            found, body, literal = [], "", True
            for child in node.named_children:
                if child.type == "heredoc_start":
                    literal = any(q in self.text(child) for q in "'\"\\")
                elif child.type == "heredoc_body":
                    body = self.text(child)
                    if not literal and any(c.type != "heredoc_content" for c in child.named_children):
                        self._substitutions(child, ctx)
                    else:
                        literal = True
                elif child.type in REDIRECTS:
                    found += self.redirect(child, ctx, extra, current)
                elif child.type == "pipeline":          # `cat <<EOF | sh`: the rest of the pipeline
                    self.stack.append((child, ctx._replace(pipe_from=current, in_pipeline=True)))
                elif child.type != "heredoc_end":
                    self.stack.append((child, ctx))
            return [Redirect(op, fd, None, body, literal)] + found
        destinations = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "destination"]
        extra.extend(destinations[1:])
        target = self.word(destinations[:1], ctx) if destinations else None
        return [Redirect(op, fd, target)]

    # ---- statements ------------------------------------------------------------------------------

    def run(self, root: Node) -> None:
        self.stack.append((root, _Ctx()))
        while self.stack:
            node, ctx = self.stack.pop()
            self.visit(node, ctx)

    def push_children(self, node: Node, ctx: _Ctx) -> None:
        children = node.children
        pending = []
        for i, child in enumerate(children):
            if child.type == "&" and not child.is_named:
                if ctx.loop is not None:
                    self.script.background_in_loop = ctx.loop.background = True
                continue
            if not child.is_named or child.type == "comment":
                continue
            background = ctx.background or (i + 1 < len(children) and children[i + 1].type == "&")
            pending.append((child, ctx._replace(background=background)))
        self.stack.extend(reversed(pending))

    def visit(self, node: Node, ctx: _Ctx) -> None:
        kind = node.type
        if kind == "command" or kind == "redirected_statement" and (
                self._body_is_command(node) or node.child_by_field_name("body") is None):   # `>out` alone writes
            self.command(node, ctx)
        elif kind == "redirected_statement":
            redirects: list[Redirect] = []
            extra: list[Node] = []
            for i, child in enumerate(node.children):
                if node.field_name_for_child(i) == "redirect" or child.type in REDIRECTS:
                    redirects += self.redirect(child, ctx, extra, node.id)
            if extra:
                self.script.constructs.add("words after a block's redirection")
            body = node.child_by_field_name("body")
            if body is not None:
                self.stack.append((body, ctx._replace(redirects=ctx.redirects + tuple(redirects))))
        elif kind in ("subshell", "command_substitution", "process_substitution"):
            if kind != "subshell":
                self.script.constructs.add("substitution")
            self.push_children(node, ctx._replace(scope=ctx.scope + (node.id,)))
        elif kind == "pipeline":
            self.pipeline(node, ctx)
        elif kind in LOOPS:
            self.loop(node, ctx)
        elif kind == "function_definition":
            self.script.constructs.add("function")
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if body is not None:
                self.stack.append((body, ctx._replace(function=self.text(name) if name else "?")))
        elif kind == "test_command":
            opener = node.children[0].type if node.children else ""
            if opener != "[":
                self.script.constructs.add(opener or "test")
            self.flat(node, ctx, [opener] if opener else [])
        elif kind in ("declaration_command", "unset_command"):
            self.flat(node, ctx, [])
        elif kind in ("variable_assignment", "variable_assignments"):
            simple = self.new_simple(node, ctx)
            simple.assignments.append(self.text(node))
            self._substitutions(node, ctx)
        elif kind == "compound_statement" and node.children and node.children[0].type == "((":
            self.script.constructs.add("arithmetic")
            self._substitutions(node, ctx)
        elif kind == "case_statement":
            self.script.constructs.add("case")
            self.push_children(node, ctx)
        elif kind in ("program", "list", "compound_statement", "do_group", "if_statement", "elif_clause",
                      "else_clause", "negated_command", "case_item", "ERROR"):
            self.push_children(node, ctx)
        elif kind not in ("comment", "heredoc_body", "heredoc_end", "heredoc_start"):
            self.script.constructs.add(kind)
            self.push_children(node, ctx)
            self._substitutions(node, ctx)

    def _body_is_command(self, node: Node) -> bool:
        body = node.child_by_field_name("body")
        return body is not None and body.type == "command"

    def new_simple(self, node: Node, ctx: _Ctx) -> Simple:
        simple = Simple(redirects=list(ctx.redirects), scope=ctx.scope, in_loop=ctx.loop is not None,
                        background=ctx.background, in_pipeline=ctx.in_pipeline, pipe_from=ctx.pipe_from,
                        function=ctx.function, id=node.id)
        self.script.commands.append(simple)
        return simple

    def command(self, node: Node, ctx: _Ctx) -> None:
        simple = self.new_simple(node, ctx)
        parts = [(node.field_name_for_child(i), c) for i, c in enumerate(node.children)]
        body = node.child_by_field_name("body") if node.type == "redirected_statement" else None
        if body is not None:
            parts = [(body.field_name_for_child(i), c) for i, c in enumerate(body.children)] + \
                [(f, c) for f, c in parts if f != "body"]
        word_nodes: list[Node] = []
        extra: list[Node] = []
        others: list[tuple[int, int]] = []
        for field_name, child in parts:
            kind = child.type
            if kind == "command_name":
                word_nodes.extend(child.children)
            elif kind in REDIRECTS:
                found = len(extra)
                simple.redirects += self.redirect(child, ctx, extra, node.id)
                ends = [c.end_byte for c in child.children if c.type == "heredoc_start"]
                others.append((child.start_byte, extra[found].start_byte if len(extra) > found
                               else ends[0] if ends else child.end_byte))
            elif kind == "variable_assignment":
                others.append((child.start_byte, child.end_byte))
                simple.assignments.append(self.text(child))
                self._substitutions(child, ctx)
            elif kind == "comment" or kind == "ERROR" and child.child_count == 0:
                continue
            elif child.is_named or kind == "$":
                if field_name in ("argument", "name") or kind == "$":
                    word_nodes.append(child)
                else:
                    self.script.constructs.add(f"{kind} in a command")
                    self.stack.append((child, ctx))
        for word in self.words(word_nodes + extra, ctx, tuple(others)):
            if word is None:                 # a newline the grammar read past: a new command starts
                simple = self.new_simple(node, ctx)
            else:
                simple.add(word)

    def flat(self, node: Node, ctx: _Ctx, lead: list[str]) -> None:
        """A command the grammar reads as an expression (`[ … ]`, `export …`): its words in order."""
        simple = self.new_simple(node, ctx)
        for word in lead:
            simple.add(Word(word))
        leaves: list[Node] = []
        inner = node.children
        if lead:
            closing = {"[": "]", "[[": "]]"}.get(lead[0], "")
            inner = inner[1:-1] if inner[-1].type == closing else inner[1:]
        todo = list(reversed(inner))
        while todo:
            n = todo.pop()
            if n.type in ("word", "string", "raw_string", "concatenation", "number", "test_operator",
                          "variable_name", "special_variable_name", "regex", "variable_assignment") \
                    or n.type in EXPANSIONS or n.type in SUBSTITUTIONS or n.child_count == 0:
                leaves.append(n)
            else:
                todo.extend(reversed(n.children))
        for leaf in leaves:
            if leaf.type == "variable_assignment":
                simple.add(Word(self.text(leaf), literal=False))
                self._substitutions(leaf, ctx)
            elif leaf.is_named or leaf.type in EXPANSIONS:
                simple.add(self.word([leaf], ctx))
            else:
                simple.add(Word(leaf.type))
        if lead:
            simple.add(Word(closing))

    def pipeline(self, node: Node, ctx: _Ctx) -> None:
        elements = [c for c in node.children if c.is_named and c.type != "comment"]
        leading_pipe = bool(node.children) and node.children[0].type in ("|", "|&")
        previous = ctx.pipe_from if leading_pipe else None
        pending = []
        for element in elements:
            pending.append((element, ctx._replace(in_pipeline=True, pipe_from=previous)))
            previous = element.id if element.type in ("command", "redirected_statement") else None
        self.stack.extend(reversed(pending))

    def loop(self, node: Node, ctx: _Ctx) -> None:
        keyword = node.children[0].type if node.children else ""
        loop = Loop(keyword, [])
        self.script.loops.append(loop)
        inner = ctx._replace(loop=loop)
        if node.type == "c_style_for_statement":
            self.script.constructs.add("arithmetic")
        elif node.type == "for_statement":
            if keyword != "for":
                self.script.constructs.add(keyword)
            header = self.new_simple(node, ctx)
            header.header = True
            variable = node.child_by_field_name("variable")
            header.add(Word("for"))
            header.add(Word(self.text(variable) if variable else ""))
            values = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "value"]
            if values:
                header.add(Word("in"))
            for word in self.words(values, ctx):
                if word is not None:
                    header.add(word)
        else:
            condition = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "condition"
                         and c.is_named]
            if len(condition) == 1 and condition[0].type == "command":
                loop.condition = [self.text(c) for c in condition[0].children]
        parts = [c for i, c in enumerate(node.children)
                 if node.field_name_for_child(i) in ("condition", "body") and c.is_named]
        self.stack.extend((child, inner) for child in reversed(parts))
        body = node.child_by_field_name("body")
        if body is not None and LEAVES.search(self.text(body)):
            loop.leaves = True


def simple_commands(command: str) -> list[Simple] | None:
    """The simple commands of a command line, or None when part of it cannot be judged."""
    script = parse(command)
    if script.errors or script.constructs:
        return None
    return script.commands
