"""The order control of an item queue: id order, or lowest extraction confidence first
(queues.ORDERS; `benchsmith annotate --order` picks the one a page opens with)."""

from __future__ import annotations

import gradio as gr

from annotator.review.queues import ORDERS


def order_control(queue: str, initial: str) -> gr.Dropdown:
    return gr.Dropdown([(label, key) for key, label in ORDERS.items()], value=initial, label="순서 · Order", scale=1,
                       elem_id=f"{queue}-order")
