"""Which drafter a file gets: the one place mapping a per-file on/off/auto choice to a mode.

The decisions themselves (which drafter, which k, per cycle) belong to the decoder's policy;
this only combines the configured drafter with the file's switch, which the policy honours.
"""

from __future__ import annotations

from decoder.config import Settings


def drafter_for(settings: Settings, file_mode: str) -> tuple[str, str]:
    """(drafter mode for the pipeline, why) for a file whose speculation is on, off or auto."""
    if file_mode == "off":
        return "none", "speculation off for this file"
    if file_mode == "on":
        mode = settings.drafter if settings.drafter != "none" else "auto"
        return mode, f"speculation on for this file: {mode} drafter"
    if settings.drafter == "auto":
        return "auto", "auto: the engine decides per request (content, cost, acceptance)"
    return settings.drafter, f"configured drafter {settings.drafter}"
