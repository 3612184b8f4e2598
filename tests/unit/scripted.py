"""A scripted text generator for the agent's unit tests: the agent's rewrite, decompose and reformulate
steps take any `(prompt, *, max_tokens) -> str` callable, and a real model's reply cannot be pinned in a
unit test. It returns a fixed reply and records the prompts it was given, so a test can check both what
the step did with the reply and what it asked for. Tests over real models live in tests/integration."""

from __future__ import annotations


class Scripted:
    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def __call__(self, prompt: str, *, max_tokens: int) -> str:
        self.prompts.append(prompt)
        return self.reply
