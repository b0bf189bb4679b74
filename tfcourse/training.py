"""One small training loop, shared by the notebooks that train a model (04, 05 and 06).

``train`` runs over an iterable of batches once (one epoch, or as many batches as the
iterable yields) and returns the mean loss of every optimizer step. It knows nothing about
the task: the caller's ``loss_fn(model, batch)`` moves the batch to the device, runs the
model and returns a scalar loss. Everything a modern loop needs is a keyword away:
gradient accumulation, gradient clipping, a learning-rate scheduler stepped once per
optimizer step, and mixed precision with ``torch.autocast`` on any device (bfloat16 works
on the CPU too). The progress bar is ``tqdm.auto``, which draws a widget in Jupyter and
writes nothing to stderr (nbgrader scores a cell that writes to stderr as failed). A notebook
executed without a browser (nbconvert, nbclient, the reader edition, autograded feedback) keeps
only the text the widget showed when it was first displayed, "0%| 0/63": the bar is therefore
displayed under a display id and redrawn once it has finished, so the stored text is the final
frame (100 %, the last loss).
"""

from collections.abc import Callable, Iterable
from contextlib import nullcontext
from typing import Any

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from torch import nn
from tqdm.auto import tqdm
from tqdm.notebook import tqdm as notebook_tqdm

from tfcourse.messages import tr


def train(
    model: nn.Module,
    batches: Iterable[Any],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    optimizer: torch.optim.Optimizer,
    *,
    scheduler: Any | None = None,
    max_grad_norm: float | None = None,
    accumulation_steps: int = 1,
    autocast_dtype: torch.dtype | None = None,
    desc: str = "training",
) -> list[float]:
    """Train ``model`` on every batch of ``batches`` once; return the mean loss per optimizer step.

    - ``loss = loss_fn(model, batch)`` must return a scalar tensor; the caller moves the batch
      to the model's device inside ``loss_fn``.
    - Gradient accumulation: each loss is divided by ``accumulation_steps`` before
      ``backward()``, and the optimizer steps (then zeroes the gradients) every
      ``accumulation_steps`` batches, so k batches of size b give the gradient of one batch of
      size k*b (for a mean loss). A last, incomplete group still makes a step, its gradient
      rescaled to the mean over the batches it holds.
    - ``max_grad_norm``: clip the global gradient norm (``clip_grad_norm_``) before each step.
    - ``scheduler``: ``scheduler.step()`` after every optimizer step (not every batch).
    - ``autocast_dtype`` (e.g. ``torch.bfloat16``): run ``loss_fn`` under ``torch.autocast``
      on the device type of the model's first parameter; the weights stay in float32.

    The model is left in training mode. A loss that is NaN or infinite stops training with a
    ``FloatingPointError`` instead of silently corrupting the weights.
    """
    if accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be >= 1, got {accumulation_steps}")
    parameters = [p for p in model.parameters() if p.requires_grad]
    if not parameters:
        raise ValueError("the model has no trainable parameters")
    device_type = parameters[0].device.type

    def precision() -> Any:
        if autocast_dtype is None:
            return nullcontext()
        return torch.autocast(device_type=device_type, dtype=autocast_dtype)

    def step(batches_in_group: int) -> None:
        if batches_in_group != accumulation_steps:  # an incomplete last group: mean over its batches
            for parameter in parameters:
                if parameter.grad is not None:
                    parameter.grad.mul_(accumulation_steps / batches_in_group)
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if scheduler is not None:
            scheduler.step()

    total = len(batches) if hasattr(batches, "__len__") else None  # type: ignore[arg-type]
    model.train()
    optimizer.zero_grad(set_to_none=True)
    step_losses: list[float] = []
    group_loss, group_size = 0.0, 0
    progress, shown = progress_bar(batches, total=total, desc=tr(desc), unit=tr("batch"))
    for batch in progress:
        with precision():
            loss = loss_fn(model, batch)
        if loss.dim() != 0:
            raise ValueError(f"loss_fn must return a scalar tensor, got shape {tuple(loss.shape)}")
        value = float(loss.detach())
        if value != value or value in (float("inf"), float("-inf")):
            raise FloatingPointError(
                f"the loss is {value} after {len(step_losses)} optimizer steps: lower the learning rate, "
                "clip gradients (max_grad_norm) or check the inputs"
            )
        (loss / accumulation_steps).backward()
        group_loss, group_size = group_loss + value, group_size + 1
        if group_size == accumulation_steps:
            step(group_size)
            step_losses.append(group_loss / group_size)
            group_loss, group_size = 0.0, 0
            progress.set_postfix({tr("loss"): f"{step_losses[-1]:.4f}"})
    if group_size:
        step(group_size)
        step_losses.append(group_loss / group_size)
    finish(progress, shown)
    return step_losses


def progress_bar(iterable: Iterable[Any], *, total: int | None, desc: str, unit: str = "it") -> tuple[Any, Any]:
    """A ``tqdm.auto`` bar over ``iterable`` and, in Jupyter, the display handle it is drawn under.

    In a terminal (or in-process) this is the plain text bar, which writes to stderr; in a Jupyter
    kernel it is the widget, displayed here with a display id so that :func:`finish` can redraw it. ``unit``
    names what it counts, in the reader's language (tqdm's own "it/s" would stay English).
    """
    if issubclass(tqdm, notebook_tqdm):  # tqdm.auto picked the Jupyter widget
        from IPython.display import display

        progress = tqdm(iterable, total=total, desc=desc, unit=unit, leave=True, display=False)
        return progress, display(progress.container, display_id=True)
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=False), None


def finish(progress: Any, shown: Any) -> None:
    """Close the bar; in Jupyter, redraw it so that a stored notebook keeps its final frame."""
    progress.close()
    if shown is not None:
        shown.update(progress.container)


def plot_losses(
    losses: list[float], title: str = "Training loss", xlabel: str = "optimizer step", ylabel: str = "loss"
) -> Figure:
    """Line plot of the loss per optimizer step with a moving average; returns the ``Figure``."""
    figure, axes = plt.subplots(figsize=(6, 3.5))
    steps = range(1, len(losses) + 1)
    axes.plot(steps, losses, alpha=0.4, label=tr("per step"))
    window = max(1, len(losses) // 20)
    if window > 1:
        values = torch.tensor(losses, dtype=torch.float64)
        smooth = values.unfold(0, window, 1).mean(dim=1)
        axes.plot(range(window, len(losses) + 1), smooth.tolist(), label=tr("mean of {window} steps", window=window))
    axes.set_title(tr(title))
    axes.set_xlabel(tr(xlabel))
    axes.set_ylabel(tr(ylabel))
    axes.legend()
    figure.tight_layout()
    return figure
