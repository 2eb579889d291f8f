"""Cross-references to re-exported names find the page where the object is documented.

``simstudy.run_study`` and ``simstudy.evaluate.cross_validate_losses`` are the names users
write, but each object is documented once, on the page of the module that defines it
(``simstudy.engine``, ``simstudy.evaluate.build``). When a Python cross-reference finds
nothing, this handler imports the name, asks the object where it was defined
(``__module__`` and ``__qualname__``) and resolves the reference there, so the links follow the
code when modules move.
"""
from __future__ import annotations

import importlib

from docutils import nodes


def _defined_at(target: str) -> str | None:
    module_name, _, attribute = target.rpartition(".")
    while module_name:
        try:
            obj = getattr(importlib.import_module(module_name), attribute.split(".")[0])
        except (ImportError, AttributeError):
            module_name, _, head = module_name.rpartition(".")
            attribute = f"{head}.{attribute}"
            continue
        for part in attribute.split(".")[1:]:
            obj = getattr(obj, part, None)
        home, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        return f"{home}.{qualname}" if home and qualname else None
    return None


def resolve(app, env, node, contnode):
    if node.get("refdomain") != "py" or not str(node.get("reftarget", "")).startswith("simstudy."):
        return None
    canonical = _defined_at(node["reftarget"])
    if not canonical or canonical == node["reftarget"]:
        return None
    domain = env.get_domain("py")
    retry = node.deepcopy()
    retry["reftarget"] = canonical
    return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], canonical, retry, contnode)


def setup(app):
    app.connect("missing-reference", resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
