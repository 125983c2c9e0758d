"""The sandboxed program that runs one completion against the tests."""

from __future__ import annotations

from functools import lru_cache

from mentor.sandbox.harness import harness_source, prompt_params, rewrite_tests


@lru_cache(maxsize=1)
def _program_head() -> str:
    """The start of every program: the harness from the workers' prelude, else from its source (formatted once)."""
    return "try:\n    from mentor_prelude import mentor_harness\nexcept ImportError:\n    exec(%r)\n" % harness_source()


def build_program(code: str, test: str, entry_point: str, prompt: str = "", nonce: str = "") -> str:
    """The sandboxed program that runs `code` against `test`. The harness comes precompiled from the
    workers' prelude; its source rides along as a string (cheap to compile) for pools without it."""
    rewritten, n_asserts = rewrite_tests(test)
    return _program_head() + ("mentor_harness(%r, %r, %r, %r, %r, %r, %r, %r)\n"
                              % (nonce, code, prompt or "", test, rewritten, n_asserts, entry_point,
                                 prompt_params(prompt, entry_point) if prompt else None))
