# lit configuration for pyddc's compiler tests.
import os

import lit.formats

config.name = "pyddc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".pydd"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.pyddc), "..", "tests", "lit-out")
config.excludes = ["Inputs"]
config.substitutions.append(("%pyddc", os.environ.get("PYDD_LIT_PYDDC", config.pyddc)))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("not ", os.path.join(os.path.dirname(config.filecheck), "not") + " "))
config.environment["PYTHONPATH"] = config.source_python_dir
config.environment["PYDDC_OPTIONS"] = "--verify-each"  # the IR verifier after every pass
