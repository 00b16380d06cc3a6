"""The stream redactor (redact.StreamRedactor): whatever the output and however it is cut into chunks,
what it passes on is exactly the redaction of the whole output, no secret is ever shown, and it holds
back only an ending that could still become a secret."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from redact import REDACTED, StreamRedactor, redact

# Few letters, so secrets share beginnings and overlap often; none of "[redacted]" (the replacement
# itself is not a secret's part: real keys are letters, digits, - and _).
ALPHABET = "xyz01-\n"
secret_values = st.lists(st.text(alphabet="xyz01-", min_size=2, max_size=12), min_size=1, max_size=4)


@st.composite
def streams(draw):
    secrets = draw(secret_values)
    pieces = draw(st.lists(st.one_of(st.text(alphabet=ALPHABET, max_size=10), st.sampled_from(secrets)),
                           max_size=12))
    data = "".join(pieces).encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    chunks = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    return secrets, data, chunks


def _could_start_a_secret(ending: bytes, secrets: list[str]) -> bool:
    return any(s.encode().startswith(ending) and len(s.encode()) > len(ending) for s in secrets)


@settings(max_examples=400)
@given(streams())
def test_what_is_passed_on_is_the_whole_output_redacted(case):
    secrets, data, chunks = case
    r = StreamRedactor(secrets)
    shown = b""
    for chunk in chunks:
        shown += r.feed(chunk)
        for secret in secrets:                     # at no moment does the screen hold a secret
            assert secret.encode() not in shown
        # nothing is held back that could not be the start of a secret
        assert r.carry == b"" or _could_start_a_secret(r.carry, secrets)
    shown += r.flush()
    assert shown.decode() == redact(data.decode(), secrets)
    for secret in secrets:
        assert secret not in shown.decode().replace(REDACTED, "\0")


@settings(max_examples=200)
@given(st.lists(st.text(alphabet="abc \n", max_size=20), max_size=10))
def test_a_line_that_cannot_begin_a_secret_is_passed_on_at_once(lines):
    r = StreamRedactor(["sk-ant-" + "x" * 101])          # a 108-character key
    for line in lines:
        assert r.feed(line.encode()) == line.encode()


def test_a_key_cut_anywhere_is_joined_and_hidden():
    key = "sk-ant-" + "k" * 101
    data = f"step 1\nthe key {key} here\nstep 2\n".encode()
    for cut in range(len(data) + 1):
        r = StreamRedactor([key])
        first = r.feed(data[:cut])
        assert key[:8].encode() not in first or b"[redacted]" in first
        shown = first + r.feed(data[cut:]) + r.flush()
        assert shown == f"step 1\nthe key {REDACTED} here\nstep 2\n".encode()


def test_only_the_possible_beginning_waits():
    key = "sk-ant-" + "k" * 101
    r = StreamRedactor([key])
    assert r.feed(b"step 1\nsk-a") == b"step 1\n"       # "sk-a" could begin the key
    assert r.feed(b"nd more\n") == b"sk-and more\n"      # it did not
