"""Shared fixtures. Keep this file small: fixtures used by one test file belong in that file."""

import pytest

from openai_server import OpenAIServer


@pytest.fixture
def openai_server():
    """A live OpenAI-compatible server on loopback (tests/openai_server.py), stopped after the test."""
    with OpenAIServer() as server:
        yield server
