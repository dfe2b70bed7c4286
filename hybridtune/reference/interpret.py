"""Executes a variant's skeleton and kernel programs statement by statement, to check its step."""

from __future__ import annotations

import numpy as np

from hybridtune.describe.c_arithmetic import Evaluator
from hybridtune.describe.expr import Index, Name
from hybridtune.describe.ivp import IVP
from hybridtune.describe.kernel import KernelTemplate
from hybridtune.describe.looplang import Loop
from hybridtune.describe.method import Method
from hybridtune.describe.skeleton import Skeleton, kernel_call
from hybridtune.reference.rhs import component


class VariantInterpreter:
    """Runs one variant of the pool on small arrays, sequentially (barriers are no-ops)."""

    def __init__(self, skeleton: Skeleton, templates: dict, choice: dict, method: Method,
                 ivp: IVP, n: int):
        self.skeleton = skeleton
        self.templates = templates
        self.choice = choice
        self.method = method
        self.n = n
        self.f_j = component(ivp, n)
        self.sizes = {"s": method.stages, "n": n, "m": method.corrector_steps}
        A, b, c = method.arrays()
        self.buffers: dict[str, np.ndarray] = {"A": A, "b": b, "c": c}
        for name in skeleton.templates:
            for decl in templates[name].datastructs:
                if decl.dims and decl.name not in self.buffers:
                    shape = tuple(int(Evaluator(self.sizes)(d)) for d in decl.dims)
                    self.buffers[decl.name] = np.zeros(shape)

    def step(self, t: float, y: np.ndarray, h: float) -> np.ndarray:
        self.buffers["y"][:] = y
        self._run_skeleton(self.skeleton.program, dict(self.sizes), t, h)
        return self.buffers["y"].copy()

    def _run_skeleton(self, items: tuple, values: dict, t: float, h: float) -> None:
        for item in items:
            if isinstance(item, Loop):
                ev = Evaluator(values)
                for v in range(int(ev(item.lower)), int(ev(item.upper))):
                    self._run_skeleton(item.body, {**values, item.var: v}, t, h)
            elif item.name == "KERNEL":
                call = kernel_call(item)
                self._run_kernel(self.templates[call.template], dict(call.bindings), t, h)
            elif item.name == "SWAP":
                a, b = item.args
                self.buffers[a], self.buffers[b] = self.buffers[b], self.buffers[a]

    def _run_kernel(self, template: KernelTemplate, bindings: dict, t: float, h: float) -> None:
        arrays = {d.name: self.buffers[bindings.get(d.name, d.name)]
                  for d in template.datastructs if d.dims}
        for decl in template.locals:
            if decl.dims:
                arrays[decl.name] = np.zeros(tuple(int(Evaluator(self.sizes)(d))
                                                   for d in decl.dims))
        scalars = {"t": t, "h": h, **self.sizes}
        program = template.variant(self.choice[template.name]).program
        self._run_items(template, program, {}, arrays, scalars)

    def _run_items(self, template, items, loop_vars, arrays, scalars) -> None:
        for item in items:
            if isinstance(item, Loop):
                ev = Evaluator({**scalars, **loop_vars})
                for v in range(int(ev(item.lower)), int(ev(item.upper))):
                    self._run_items(template, item.body, {**loop_vars, item.var: v}, arrays,
                                    scalars)
                continue
            statement = template.computation(item.args[0])
            env = {**scalars, **loop_vars}

            def rhs(env=env):
                ev = Evaluator(env, arrays)
                vector = ev(template.rhs_input) if isinstance(template.rhs_input, Index) \
                    else arrays[template.rhs_input.id]
                return self.f_j(env["j"], ev(template.rhs_time), vector)

            ev = Evaluator(env, arrays, rhs=rhs)
            value = ev(statement.value)
            target = statement.target
            if isinstance(target, Name):
                scalars[target.id] = value + scalars[target.id] if statement.op == "+=" else value
            else:
                index = tuple(int(ev(i)) for i in target.indices)
                if statement.op == "+=":
                    arrays[target.array][index] += value
                else:
                    arrays[target.array][index] = value
