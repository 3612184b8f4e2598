"""Exponential restart backoff that forgets old crashes once a service has stayed up.

Why: a service that crashes in a loop (bad config, full disk) must not be
restarted hundreds of times a minute, but a service that ran for an hour and
then crashed once deserves an immediate restart, not the long delay it earned
an hour ago.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Backoff:
    """Delay before the next restart: `initial * factor**n`, capped at `maximum`.

    `n` counts restarts since the service last stayed up for `stable_s` seconds.
    """

    initial: float = 1.0
    factor: float = 2.0
    maximum: float = 60.0
    stable_s: float = 60.0
    attempts: int = 0

    def next_delay(self) -> float:
        """The delay for the restart about to happen (and count it)."""
        delay = min(self.maximum, self.initial * self.factor ** self.attempts)
        self.attempts += 1
        return delay

    def observe_uptime(self, seconds: float) -> None:
        """Call with how long the current process has run; resets after `stable_s`."""
        if seconds >= self.stable_s:
            self.attempts = 0
