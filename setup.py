"""Only the C extension lives here; everything else is in pyproject.toml."""

import os
import platform

from setuptools import Extension, setup

# popcount is the evaluator's inner loop: use the instruction where every x86-64 CPU since ~2008 has it
ARCH_FLAGS = ["-mpopcnt"] if platform.machine() in ("x86_64", "AMD64") else []
CFLAGS = ["-O3", "-std=c99", "-Wall", "-Wno-unused-function", *ARCH_FLAGS]
LDFLAGS: list[str] = []
# MELD8_SANITIZE=1: an AddressSanitizer + UndefinedBehaviorSanitizer build for the fuzz job
# (tools/sanitize.sh); any memory error or undefined behaviour aborts the process.
if os.environ.get("MELD8_SANITIZE") == "1":
    SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer", "-g"]
    CFLAGS = ["-O1", "-std=c99", "-Wall", "-Wno-unused-function", *ARCH_FLAGS, *SAN]
    LDFLAGS = SAN

setup(
    ext_modules=[
        Extension(
            "meld8_env.hands._native",
            sources=[
                "meld8_env/hands/_native.c",
                "meld8_env/hands/_eval.c",
                "meld8_env/hands/_score.c",
            ],
            depends=["meld8_env/hands/_eval.h", "meld8_env/hands/_score.h"],
            extra_compile_args=CFLAGS,
            extra_link_args=LDFLAGS,
        ),
        Extension(
            "meld8_env.engine._fast",
            sources=[
                "meld8_env/engine/_fast.c",
                "meld8_env/engine/_engine.c",
                "meld8_env/engine/_state.c",
                "meld8_env/engine/_bots.c",
                "meld8_env/hands/_eval.c",
                "meld8_env/hands/_score.c",
            ],
            depends=[
                "meld8_env/engine/_engine.h",
                "meld8_env/engine/_bots.h",
                "meld8_env/engine/_splitmix.h",
                "meld8_env/hands/_eval.h",
                "meld8_env/hands/_score.h",
            ],
            # -pthread: the rollout plays its records on several threads of its own (py_rollout)
            extra_compile_args=[*CFLAGS, "-pthread"],
            extra_link_args=[*LDFLAGS, "-pthread"],
        ),
        Extension(
            "meld8_env._belief",
            sources=["meld8_env/_belief.c", "meld8_env/hands/_eval.c"],
            depends=["meld8_env/hands/_eval.h"],
            extra_compile_args=CFLAGS,
            extra_link_args=LDFLAGS,
        ),
    ]
)
