"""Where the package finds its programs: mncc and mnemu, node and onnxruntime-node.

The programs are looked up in this order: the environment (MNCC, MNEMU: paths to the
binaries, as make bench takes them), the bin directory `make install` recorded beside
the installed package (_install.py), the build directory of the source tree this
package sits in (python/mncc -> build/), and finally PATH. The first that exists wins,
so a source tree works without installing and an installed package never reaches into
a source tree it does not know."""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(os.path.dirname(HERE))  # the source tree, when the package runs from it


def _installed_bindir():
    try:
        from . import _install  # written by make install
        return _install.BINDIR
    except ImportError:
        return None


def program(name):
    """the path of mncc or mnemu; FileNotFoundError naming where it looked when none is there"""
    env = os.environ.get(name.upper())
    places = [env] if env else []
    bindir = _installed_bindir()
    if bindir:
        places.append(os.path.join(bindir, name))
    places.append(os.path.join(TREE, "build", name))
    for p in places:
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError("mncc package: no %s program (looked at $%s, %s and PATH; build the tree with make, or "
                            "make install)" % (name, name.upper(), ", ".join(p for p in places[1 if env else 0:])))


def node_runner():
    """(node, NODE_PATH) able to run ort_ref.js with onnxruntime-node, or None: node from PATH, the module from
    $MNCC_NODE_MODULES, $NODE_PATH or the source tree's build/real/node_modules (make npm-deps)"""
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        return None
    dirs = [os.environ.get("MNCC_NODE_MODULES")] + os.environ.get("NODE_PATH", "").split(os.pathsep) + \
        [os.path.join(TREE, "build", "real", "node_modules")]
    for d in dirs:
        if d and os.path.isdir(os.path.join(d, "onnxruntime-node")):
            return node, d
    return None


ORT_REF_JS = os.path.join(HERE, "ort_ref.js")
