"""Train your code with the grader's recipe and see which side of each training threshold it lands.

    python -m exercises.check_training                 # every threshold item, stopped as the grader stops it
    python -m exercises.check_training --seeds 1       # one seed per item: quicker, less sure
    python -m exercises.check_training --only "SequenceClassifier: learns the task"
    python -m exercises.check_training --full-length   # every seed to the recipe's last epoch: slower

`recipe.py` is the grader's own training code, unchanged, and `settings.json` its settings: the
same models, optimiser, epochs, seeds and threshold, and the same report the grader writes. Like
the grader, a training stops at the first epoch whose held-out accuracy reaches the threshold plus
the recipe's stop_margin, and a seed is not trained once the others decide the median (medians.py).
Only the data differ: these rows come from other seeds than the grader's, so your grade's accuracies
will be close to these, not equal; and the classifier's forget gate is opened by your own
set_forget_bias (forget_gate.py). Exit status 0 when every item reaches its threshold, 1 otherwise.
"""

import argparse
import importlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
from exercises.check_training import dynamo, medians, recipe

from exercises import data

SETTINGS = Path(__file__).resolve().parent / "settings.json"


@dataclass(frozen=True)
class Trained:
    """One seed's training, where it stopped."""

    accuracy: float  # on the held-out rows, after its last epoch
    epochs: int  # the epochs it trained


def resolve(dotted: str) -> Any:
    """'classifier.SequenceClassifier' -> your exercises.classifier.SequenceClassifier."""
    module, *path = dotted.split(".")
    value = importlib.import_module(f"exercises.{module}")
    for name in path:
        value = getattr(value, name)
    return value


def trained(settings: dict[str, Any], seed: int, seeds: recipe.DataSeeds, stop: recipe.Stop) -> Trained:
    """One training run of the recipe with `seed`, measured on the held-out rows at each epoch the rule checks;
    it ends where the rule stops it. Your code is trusted here (your machine): it measures its own model."""
    run = recipe.training_run(data, settings, seed, seeds)
    torch.set_num_threads(1)  # as the grader: one thread, so a run repeats exactly
    for epoch, model in enumerate(recipe.epochs_of(resolve, run), start=1):
        accuracy = recipe.held_out_accuracy(resolve, run, model) if stop.checked(epoch) else None
        if stop.stops(epoch, accuracy):
            return Trained(accuracy, epoch)
    raise RuntimeError("the recipe trained no epoch")  # epochs = 0 in settings.json


def trainings(
    settings: dict[str, Any], seeds: recipe.DataSeeds, count: int | None, stop: recipe.Stop, jobs: int
) -> list:
    """Each seed's training (None: not needed, the seeds trained already decide the median's side). As the grader
    does, only as many seeds train at once as could still decide the median: two of three, the third when they
    end on both sides of the threshold. Those train side by side, one process each (your machine's cores)."""
    chosen = settings["seeds"][:count]
    done: dict[int, Trained] = {}
    while going := _going(settings, chosen, done, stop):
        done |= dict(zip(going, _train(settings, going, seeds, stop, jobs), strict=True))
    return [done.get(seed) for seed in chosen]


def _going(settings: dict[str, Any], chosen: list[int], done: dict[int, Trained], stop: recipe.Stop) -> list[int]:
    """The seeds to train next: every one left, or (seeds decided early) as many as could still decide."""
    left = [seed for seed in chosen if seed not in done]
    if not stop.decides_early:
        return left
    cleared = sum(1 for t in done.values() if t.accuracy >= settings["threshold"])
    return left[: medians.still_training(cleared, len(done) - cleared, len(chosen))]


def _train(settings: dict[str, Any], going: list[int], seeds: recipe.DataSeeds, stop: recipe.Stop, jobs: int) -> list:
    """The seeds' trainings, side by side in `jobs` processes (each one thread, so each run repeats exactly)."""
    if jobs == 1 or len(going) == 1:
        return [trained(settings, seed, seeds, stop) for seed in going]
    with ProcessPoolExecutor(max_workers=min(jobs, len(going))) as pool:
        return list(pool.map(partial(trained, settings, seeds=seeds, stop=stop), going))


def stopped_early(settings: dict[str, Any], done: list[Trained | None], stop: recipe.Stop) -> str:
    """A line per seed that stopped before the recipe's last epoch, with the accuracy that stopped it."""
    return "".join(
        f"\n  Seed {seed} stopped at epoch {t.epochs} of {stop.epochs}: {t.accuracy:.3f} ≥ {stop.level:.2f} "
        f"(the threshold + its stop margin {settings['stop_margin']:.2f}: the grader stops there too)."
        for seed, t in zip(settings["seeds"], done, strict=False)
        if t is not None and t.epochs < stop.epochs
    )


def main(argv: list[str] | None = None) -> int:
    everything = json.loads(SETTINGS.read_text(encoding="utf-8"))
    items = everything["items"]
    parser = argparse.ArgumentParser(prog="python -m exercises.check_training", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, help="train with only the first N of each item's seeds")
    parser.add_argument("--only", choices=sorted(items), help="check one item")
    parser.add_argument("--full-length", action="store_true", help="train every seed to the recipe's last epoch")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="seeds trained at once (your cores)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # before any process starts: each training is one thread, as in the grader
    dynamo.install()  # as the grader: torch._dynamo, a second of CPU that eager training never uses, not imported
    seeds = recipe.DataSeeds(**everything["data_seeds"])
    reached = True
    for name, settings in items.items():
        if args.only and name != args.only:
            continue
        stop = recipe.Stop.of(settings, full_length=args.full_length)
        try:
            done = trainings(settings, seeds, args.seeds, stop, max(1, args.jobs))
        except Exception as error:  # a TODO not done yet, or a bug the training run meets
            print(f"{name}: the training run failed: {type(error).__name__}: {error}\n", flush=True)
            reached = False
            continue
        accuracies = [None if t is None else t.accuracy for t in done]
        passes = recipe.reaches(settings, [value for value in accuracies if value is not None])
        verdict = "reaches the threshold" if passes else "falls short"
        print(f"{name}: {verdict}\n{recipe.report(settings, accuracies)}{stopped_early(settings, done, stop)}\n")
        sys.stdout.flush()
        reached = reached and passes
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
