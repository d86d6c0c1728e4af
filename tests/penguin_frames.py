"""A small penguins-like table (text, float with NaNs, int, "NA" text) for the columnar-format tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def penguins_like() -> pd.DataFrame:
    """40 rows: `species`, `bill` (two NaNs), `year`, `sex` (with "NA" cells); the same rows every call."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "species": rng.choice(["Adelie", "Gentoo", "Chinstrap"], 40),
            "bill": rng.uniform(30, 60, 40).round(1),
            "year": rng.integers(2007, 2010, 40),
            "sex": rng.choice(["male", "female", "NA"], 40),
        }
    )
    frame.loc[[3, 9], "bill"] = np.nan
    return frame
