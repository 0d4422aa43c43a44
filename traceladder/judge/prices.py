"""The judge's price table: the shipped one (`prices.toml`), overridden per model by a user's file."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from traceladder.errors import UserError


@dataclass(frozen=True)
class Prices:
    per_million: Mapping[str, tuple[float, float]]  # model → (input, output) USD per 1M tokens

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD for one call, None when the model has no price."""
        price = self.per_million.get(model)
        if price is None:
            return None
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def _read(text: str, where: str) -> dict[str, tuple[float, float]]:
    try:
        models = tomllib.loads(text).get("models", {})
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{where}: not a valid price table: {exc}") from None
    out = {}
    for model, price in models.items() if isinstance(models, dict) else ():
        values = (price.get("input"), price.get("output")) if isinstance(price, dict) else (None, None)
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in values):
            raise UserError(f'{where}: [models."{model}"] needs non-negative numbers `input` and `output`')
        out[model] = (float(values[0]), float(values[1]))  # type: ignore[arg-type]
    return out


def load_prices(path: Path | None = None) -> Prices:
    shipped = (resources.files("traceladder.judge") / "prices.toml").read_text(encoding="utf-8")
    table = _read(shipped, "prices.toml")
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read the price table {path}: {exc}") from None
        table.update(_read(text, str(path)))
    return Prices(table)
