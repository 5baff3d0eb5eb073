"""``waterdrum demo``: recipes under --quick, warnings before slow work."""

from __future__ import annotations

from tests.scripts.cli_cases import (
    captured_config,
    run,
)
from waterdrum_hf.experiments.demo import DemoConfig


def test_a_demo_recipe_gives_options_under_quick_and_the_command_line_overrides_it(
    monkeypatch, tmp_path
):
    """`--config FILE.yaml` over `--quick`'s defaults, the command line over both."""
    recipe = tmp_path / "demo.yaml"
    recipe.write_text("owners: 5\nmethods: [kl, npo]\nnull_keys: 3\n")
    argv = ["--config", recipe, "--quick", "--owners", "4"]
    config = captured_config("demo", argv, monkeypatch, tmp_path)
    assert config == DemoConfig.quick(owners=4, methods=("kl", "npo"), null_keys=3)


def test_many_null_keys_warn_that_they_are_slow(monkeypatch, tmp_path, capsys):
    import waterdrum_hf.experiments.demo as demo

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "run_demo", interrupt)
    code, _, err = run(["demo", "--null-keys", 20_000, "--output-dir", tmp_path / "d"], capsys)
    assert code == 130
    assert "warning: --null-keys 20000: every key is a pass over the" in err
