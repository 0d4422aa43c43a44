"""The judge's price table: the shipped one (`prices.toml`), overridden per model by a user's file."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from traceladder.errors import UserError
from traceladder.files import LIMITS, read_input


@dataclass(frozen=True)
class Prices:
    per_million: Mapping[str, tuple[float, float]]  # model → (input, output) USD per 1M tokens

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD for one call, None when the model has no price."""
        price = self.per_million.get(model)
        if price is None:
            return None
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


PRICE_KEYS = ("input", "output")


def _read(text: str, where: str) -> dict[str, tuple[float, float]]:
    """Strict: a file that prices nothing, a table or key we do not read (a typo such as
    `[model."x"]` or `inptu`) or a price that is not a finite non-negative number is refused,
    never run with — a silently ignored price shows up only as a wrong cost in a report."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{where}: not a valid price table: {exc}") from None
    unknown = sorted(set(document) - {"models"})
    if unknown:
        raise UserError(f'{where}: unknown table or key {unknown[0]!r}; prices go under [models."NAME"]')
    models = document.get("models")
    if not isinstance(models, dict) or not models:
        raise UserError(f'{where}: no prices; add [models."NAME"] tables with `input` and `output`')
    return {model: _price(model, price, where) for model, price in models.items()}


def _price(model: str, price: object, where: str) -> tuple[float, float]:
    table = f'[models."{model}"]'
    if not isinstance(price, dict):
        raise UserError(f"{where}: {table} must be a table with `input` and `output`")
    unknown = sorted(set(price) - set(PRICE_KEYS))
    if unknown:
        raise UserError(f"{where}: {table} has an unknown key {unknown[0]!r}; use `input` and `output`")
    values = []
    for key in PRICE_KEYS:
        value = price.get(key)
        if not (isinstance(value, int | float) and not isinstance(value, bool)):
            raise UserError(
                f"{where}: {table} needs non-negative numbers `input` and `output`; `{key}` is not one"
            )
        if not math.isfinite(value) or value < 0:
            raise UserError(f"{where}: {table} `{key}` = {value!r}; prices are finite non-negative numbers")
        values.append(float(value))
    return values[0], values[1]


def load_prices(path: Path | None = None) -> Prices:
    shipped = (resources.files("traceladder.evaluate.judge") / "prices.toml").read_text(encoding="utf-8")
    table = _read(shipped, "prices.toml")
    if path is not None:
        data = read_input(path, "price table", LIMITS["price table"])
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"the price table {path} is not UTF-8 text") from None
        table.update(_read(text, str(path)))
    return Prices(table)
