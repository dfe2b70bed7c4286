"""The variant pool: every skeleton with every combination of its templates' kernel variants."""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass

from hybridtune.describe.method import Method
from hybridtune.generate.canonical import kernel_text, variant_text
from hybridtune.errors import HybridtuneError, RequestError


@dataclass(frozen=True)
class Variant:
    """One implementation: a skeleton and, per template it runs, the kernel variant chosen."""
    id: str
    skeleton: str
    kernels: tuple          # ((template, kernel variant), ...) in the skeleton's order
    code_hash: str = ""
    same_as: tuple = ()     # ids of variants that generate identical code, folded into this one

    @property
    def kernel_map(self) -> dict:
        return dict(self.kernels)


@dataclass(frozen=True)
class Pool:
    method: str
    variants: tuple
    duplicates: int


def variant_id(skeleton: str, names: tuple[str, ...]) -> str:
    """Offsite's naming: the skeleton, then the chosen kernel variants in the skeleton's order."""
    return "_".join((skeleton,) + names)


def build_pool(skeletons: tuple, templates: dict, method: Method) -> Pool:
    """The pool for one method; variants whose specialised code is identical are one variant."""
    by_hash: dict[str, Variant] = {}
    order: list[str] = []
    ids: set[str] = set()
    total = 0
    texts = {(t.name, v.name): kernel_text(t, v.name, method.stages)
             for t in templates.values() for v in t.variants}
    for skeleton in skeletons:
        names = skeleton.templates
        choices = [[v.name for v in templates[name].variants] for name in names]
        for combo in itertools.product(*choices):
            total += 1
            vid = variant_id(skeleton.name, combo)
            if vid in ids:
                raise HybridtuneError(f"two variants share the id {vid}: kernel variant names "
                                      "must be unique across templates")
            ids.add(vid)
            lines = {name: texts[(name, choice)] for name, choice in zip(names, combo)}
            text = variant_text(skeleton, lines, method.stages, method.corrector_steps)
            digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            if digest in by_hash:
                first = by_hash[digest]
                by_hash[digest] = Variant(first.id, first.skeleton, first.kernels, digest,
                                          first.same_as + (vid,))
                continue
            by_hash[digest] = Variant(vid, skeleton.name, tuple(zip(names, combo)), digest)
            order.append(digest)
    variants = tuple(by_hash[d] for d in order)
    return Pool(method.name, variants, total - len(variants))


def covering_sample(variants) -> list:
    """Few variants that together use every kernel variant of each skeleton's templates: in turn
    the one that uses the most kernel variants not yet used (the first of equals, in the order
    given), kept in that order."""
    variants = list(variants)
    uses = [{(variant.skeleton, k) for k in variant.kernels} for variant in variants]
    unused = set().union(*uses)
    chosen: list[int] = []
    while unused:
        best = max(range(len(variants)), key=lambda i: (len(uses[i] & unused), -i))
        chosen.append(best)
        unused -= uses[best]
    return [variants[i] for i in sorted(chosen)]


def pool_for(scenario, method) -> dict[str, Variant]:
    """id -> variant of the scenario's pool for one method."""
    return {v.id: v for v in build_pool(scenario.skeletons, scenario.template_map, method).variants}


def select_variants(scenario, method, ids: list[str] | None) -> list[Variant]:
    """The variants with these ids (or folded aliases of them); all of the pool without ids."""
    pool = pool_for(scenario, method)
    if not ids:
        return list(pool.values())
    aliases = {alias: v for v in pool.values() for alias in v.same_as}
    unknown = [i for i in ids if i not in pool and i not in aliases]
    if unknown:
        raise RequestError(f"--variant: unknown variant id(s) {', '.join(unknown)} in scenario "
                           f"{scenario.name} for method {method.name}; `hybridtune variants "
                           f"{scenario.path}` lists the {len(pool)} ids")
    return [pool.get(i) or aliases[i] for i in dict.fromkeys(ids)]
