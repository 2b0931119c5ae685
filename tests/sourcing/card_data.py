"""The data tables of the card fixtures (tests/fixtures/cards): small, seeded, with a learnable outcome,
written beside a copy of each card as the card's own tool leaves it."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cards"


def bicycles(n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    age = rng.integers(0, 15, n)
    tier = rng.choice(["entry", "mid", "high"], n)
    weight = np.round(rng.normal(9.5, 1.2, n), 2)
    price = 2200 * np.exp(-0.12 * age) * pd.Series(tier).map({"entry": 0.6, "mid": 1.0, "high": 1.8}).to_numpy()
    return pd.DataFrame({"listing_id": np.arange(100_001, 100_001 + n), "frame_size_cm": rng.integers(48, 62, n),
                         "age_years": age, "groupset": tier, "weight_kg": weight,
                         "price_eur": np.round(price * rng.lognormal(0, 0.1, n) - 60 * (weight - 9.5), 0)})


def coffee(n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    moisture = np.round(rng.normal(11, 1.0, n), 2)
    density = np.round(rng.normal(700, 30, n), 1)
    minutes = np.round(rng.uniform(9, 15, n), 1)
    score = -0.8 * (moisture - 11) + 0.03 * (density - 700) - 0.4 * np.abs(minutes - 12) + rng.normal(0, 0.5, n)
    return pd.DataFrame({"moisture": moisture, "density": density, "roast_minutes": minutes,
                         "origin": rng.choice(["Ethiopia", "Colombia", "Brazil", "Kenya"], n),
                         "grade": np.where(score > 0, "specialty", "standard")})


def cars(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    engine = np.round(rng.uniform(1.0, 2.5, n), 1)
    weight = np.round(900 + 300 * engine + rng.normal(0, 60, n), 0)
    return pd.DataFrame({"make": rng.choice(["A", "B", "C", "D"], n), "engine_l": engine,
                         "cylinders": np.where(engine > 1.6, 4, 3), "transmission": rng.choice(["manual", "automatic"], n),
                         "curb_weight_kg": weight, "mpg": np.round(60 - 8 * engine - 0.01 * weight + rng.normal(0, 2, n), 1)})


def lungs(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    age = rng.integers(3, 20, n)
    height = np.round(40 + 2.1 * age + rng.normal(0, 3, n), 1)
    return pd.DataFrame({"LungCap": np.round(-11 + 0.26 * height + 0.1 * age + rng.normal(0, 1, n), 3), "Age": age,
                         "Height": height, "Smoke": rng.choice(["no", "yes"], n, p=[0.9, 0.1]),
                         "Gender": rng.choice(["male", "female"], n), "Caesarean": rng.choice(["no", "yes"], n)})


# fixture folder -> (dataset folder name, table path inside it, table)
DOWNLOADS = {
    "kaggle_download": ("used-bicycle-prices", "listings.csv", bicycles),
    "huggingface": ("coffee-roast-quality", "data/train.csv", coffee),
    "markdown": ("fuel-economy", "fuel_economy.csv", cars),
    "kaggle_export": ("lung-capacity", "train.csv", lungs),
}


def make_folder(root: Path, *kinds: str) -> Path:
    """`root` holding one dataset folder per fixture kind: the card copied, the table written."""
    root.mkdir(parents=True, exist_ok=True)
    for kind in kinds or tuple(DOWNLOADS):
        name, table_path, table = DOWNLOADS[kind]
        shutil.copytree(FIXTURES / kind / name, root / name)
        (root / name / table_path).parent.mkdir(parents=True, exist_ok=True)
        table().to_csv(root / name / table_path, index=False)
    return root
