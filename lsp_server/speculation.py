"""Which drafter a file gets: the one place mapping a per-file on/off/auto choice to a mode.

The speed policy (decoder side) will replace `drafter_for`; until then "auto" means the
configured drafter.
"""

from __future__ import annotations

from decoder.config import Settings


def drafter_for(settings: Settings, file_mode: str) -> tuple[str, str]:
    """(drafter mode for the pipeline, why) for a file whose speculation is on, off or auto."""
    if file_mode == "off":
        return "none", "speculation off for this file"
    if file_mode == "on":
        mode = settings.drafter if settings.drafter != "none" else "lookup"
        return mode, f"speculation on for this file: {mode} drafter"
    return settings.drafter, f"auto: configured drafter {settings.drafter}"
