"""The forms cache: a cached form is the form built again, keys follow the descriptions, and a damaged file is built again."""

from __future__ import annotations

import dataclasses

from hybridtune.generate import form_cache
from hybridtune.generate.form_cache import cached_form, form_key, keep_form
from hybridtune.generate.kerncraft_form import kerncraft_form


def test_a_cached_form_equals_the_built_one(default_scenario, radau7, tmp_path, monkeypatch):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path))
    checked = 0
    for ivp in default_scenario.ivps:
        for template in default_scenario.templates:
            variant = template.variants[0].name
            form = kerncraft_form(template, variant, radau7, ivp)
            key = form_key(template, variant, radau7, ivp)
            assert cached_form(key) is None
            keep_form(key, form)
            assert cached_form(key) == form
            checked += 1
    assert checked == 4 * len(default_scenario.templates)
    assert not list(tmp_path.glob("forms/*.tmp"))


def test_keys_follow_the_descriptions_and_the_code(default_scenario, radau7, monkeypatch):
    template, ivp = default_scenario.templates[0], default_scenario.ivps[0]
    key = form_key(template, template.variants[0].name, radau7, ivp)
    assert key == form_key(template, template.variants[0].name, radau7, ivp)
    assert key != form_key(template, template.variants[0].name, radau7, default_scenario.ivps[1])
    assert key != form_key(template, template.variants[0].name,
                           dataclasses.replace(radau7, corrector_steps=radau7.corrector_steps + 1),
                           ivp)
    monkeypatch.setattr(form_cache, "code_identity", lambda: "other code")
    assert key != form_key(template, template.variants[0].name, radau7, ivp)


def test_a_damaged_file_is_built_again(default_scenario, radau7, tmp_path, monkeypatch):
    monkeypatch.setenv("HYBRIDTUNE_CACHE", str(tmp_path))
    template, ivp = default_scenario.templates[0], default_scenario.ivps[0]
    key = form_key(template, template.variants[0].name, radau7, ivp)
    keep_form(key, kerncraft_form(template, template.variants[0].name, radau7, ivp))
    (tmp_path / "forms" / f"{key}.json").write_text('{"parts": [')
    assert cached_form(key) is None
