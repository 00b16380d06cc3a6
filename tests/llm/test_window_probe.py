"""Asking a local server its window (llm/window_probe.py): each server's answer, and hostile ones — over
real HTTP from the stand-in (its probe options), or parsed directly."""

from __future__ import annotations

import json

import pytest

from compaction.window import MAX_TOLD, MIN_WINDOW
from llm.window_probe import (OLLAMA_DEFAULT, Told, WindowProbe, ollama_window, parse_models, parse_props,
                              server_root, wanted)
from standin.server import StandIn


def probed(timeout: float = 2.0, max_bytes: int | None = None, **options) -> tuple[Told | None, StandIn]:
    with StandIn(api_key="k", **options) as server:
        kwargs = {"timeout": timeout} | ({"max_bytes": max_bytes} if max_bytes else {})
        probe = WindowProbe.start(server.url + "/v1", "stand-in", "k", **kwargs)
        assert probe.done.wait(30)
        return probe.result(), server


# ---- each server ---------------------------------------------------------------------------------------

def test_llama_cpp_props():
    told, server = probed(props_window=4_096)
    assert told == Told(4_096, "llama.cpp /props n_ctx") and server.probes == ["/props"]


def test_llama_cpp_props_top_level_n_ctx():
    assert parse_props({"n_ctx": 8_192}) == 8_192
    assert parse_props({"default_generation_settings": {"n_ctx": 16_384}, "n_ctx": 8_192}) == 16_384


def test_ollama_show_num_ctx():
    told, server = probed(ollama_window=8_192)
    assert told == Told(8_192, "Ollama /api/show num_ctx") and server.probes == ["/api/show"]


def test_ollama_without_num_ctx_runs_its_default_or_what_ps_says():
    show = {"parameters": 'stop "<|eot|>"', "model_info": {"general.architecture": "qwen3",
                                                          "qwen3.context_length": 40_960}}
    assert ollama_window(show, None, "qwen3") == (OLLAMA_DEFAULT, "Ollama's default num_ctx")
    ps = {"models": [{"name": "qwen3", "model": "qwen3", "context_length": 32_768}]}
    assert ollama_window(show, ps, "qwen3") == (32_768, "Ollama /api/ps context_length")


def test_ollama_num_ctx_above_what_the_model_was_trained_for_is_the_trained_length():
    show = {"parameters": "num_ctx 65536", "model_info": {"general.architecture": "llama",
                                                          "llama.context_length": 8_192}}
    assert ollama_window(show, None, "m") == (8_192, "Ollama /api/show context_length")


def test_vllm_and_sglang_models():
    told, server = probed(vllm_window=32_768)
    assert told == Told(32_768, "/v1/models max_model_len") and server.probes == ["/v1/models"]
    listing = {"data": [{"id": "a", "max_model_len": 8_192}, {"id": "b", "max_model_len": 16_384}]}
    assert parse_models(listing, "b") == 16_384 and parse_models(listing, "c") is None


def test_llama_cpp_is_asked_first_and_wins():
    told, _server = probed(props_window=4_096, ollama_window=8_192, vllm_window=16_384)
    assert told is not None and told.tokens == 4_096


def test_an_endpoint_that_says_nothing_says_nothing():
    told, server = probed()
    assert told is None and server.probes == [] and server.answers == []


def test_the_base_url_and_who_is_asked():
    assert server_root("http://h:8080/v1/") == "http://h:8080" == server_root("http://h:8080/v1/messages")
    assert server_root("http://h:11434") == "http://h:11434"
    assert not wanted("https://api.anthropic.com") and not wanted("https://eu.api.anthropic.com/")
    assert not wanted("file:///etc/passwd") and wanted("http://127.0.0.1:8080")


# ---- hostile answers -----------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [-4_096, 0, MIN_WINDOW - 1, MAX_TOLD + 1, 10**30, "4096", True, None, 4096.5,
                                   [4096], {"n": 4096}])
def test_a_window_that_is_not_a_believable_int_is_ignored(value):
    assert parse_props({"default_generation_settings": {"n_ctx": value}}) is None
    assert parse_models({"data": [{"id": "m", "max_model_len": value}]}, "m") is None
    text = "stop x" if isinstance(value, str) else f"num_ctx {value}"     # in the text, digits are its form
    show = {"parameters": text, "model_info": {"general.architecture": "x", "x.context_length": value}}
    assert ollama_window(show, {"models": [{"name": "m", "context_length": value}]}, "m") in (
        None, (OLLAMA_DEFAULT, "Ollama's default num_ctx"))


@pytest.mark.parametrize("junk", [None, [], "text", 5, {"data": "x"}, {"data": [1, "a", None]},
                                  {"default_generation_settings": [1]}, {"parameters": 5, "model_info": []}])
def test_junk_shapes_say_nothing(junk):
    assert parse_props(junk) is None and parse_models(junk, "m") is None
    assert ollama_window(junk, junk, "m") in (None, (OLLAMA_DEFAULT, "Ollama's default num_ctx"))


@pytest.mark.parametrize("body", [b"not json", b"[" * 200_000 + b"]" * 200_000, b"{\"n_ctx\": 4096",
                                  b"\xff\xfe garbage", b""])
def test_a_broken_answer_over_http_is_nothing(body):
    told, server = probed(probe_answers={"/props": (200, body, 0)})
    assert told is None and server.probes == ["/props"]


def test_a_10_mb_answer_is_not_read():
    huge = json.dumps({"default_generation_settings": {"n_ctx": 4_096}, "pad": "x" * 10_000_000}).encode()
    told, _server = probed(probe_answers={"/props": (200, huge, 0)})
    assert told is None


def test_a_slow_drip_ends_at_the_timeout():
    """64 KB every half second: 200 KB would take two seconds; the probe gives up after its 0.5 s."""
    body = json.dumps({"default_generation_settings": {"n_ctx": 4_096}, "pad": "x" * 200_000}).encode()
    told, _server = probed(timeout=0.5, probe_answers={"/props": (200, body, 0.5)})
    assert told is None


def test_an_error_status_or_a_redirect_is_nothing():
    good = json.dumps({"default_generation_settings": {"n_ctx": 4_096}}).encode()
    for status in (301, 404, 500):
        told, _server = probed(probe_answers={"/props": (status, good, 0)})
        assert told is None, status


def test_a_probe_that_cannot_connect_says_nothing():
    probe = WindowProbe.start("http://127.0.0.1:9", "m", "", timeout=0.5)
    assert probe.done.wait(30) and probe.result() is None
