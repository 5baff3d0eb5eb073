"""Hugging Face Space entry point for the WaterDrum metric (as in evaluate's module template).

The module is loaded from this folder by absolute path, which works in the Space and locally.
"""

import os

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(os.path.dirname(os.path.abspath(__file__)))
launch_gradio_widget(module)
