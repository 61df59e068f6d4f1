"""Rulesets: the movement rules as data.

`ruleset` is the model (terrain kinds, unit profiles and their multipliers);
`load` reads a rules file (TOML) into it.  The shipped rulesets are the
``.toml`` files beside this module.
"""

from .load import load_rules, shipped_rulesets
from .ruleset import Rate, Ruleset, TerrainEffects, TerrainKind, Unit

__all__ = ["Rate", "Ruleset", "TerrainEffects", "TerrainKind", "Unit", "load_rules",
           "shipped_rulesets"]
