"""What tests share, imported as `from support.<module> import …` (pytest.ini puts tests/ on the path):

    agents.py         the environment an s08 under test gets, and ways to start one as a new interpreter
    helpers.py        builders for API-shaped histories, a scripted brain, an in-process App and main()
    strategies.py     hypothesis strategies for valid histories
    screen.py         a terminal screen rebuilt from everything a pseudo-terminal printed
    broken_stream.py  a hostile or broken stream server
    attacks.py        terminal-injection payloads
    gateway.py        a real LiteLLM proxy for the gateway lane (tests/e2e/test_gateway.py)
"""
