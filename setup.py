"""Only the C extension lives here; everything else is in pyproject.toml."""

import platform

from setuptools import Extension, setup

# popcount is the evaluator's inner loop: use the instruction where every x86-64 CPU since ~2008 has it
ARCH_FLAGS = ["-mpopcnt"] if platform.machine() in ("x86_64", "AMD64") else []
CFLAGS = ["-O3", "-std=c99", "-Wall", "-Wno-unused-function", *ARCH_FLAGS]

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
        ),
        Extension(
            "meld8_env.engine._fast",
            sources=[
                "meld8_env/engine/_fast.c",
                "meld8_env/engine/_engine.c",
                "meld8_env/hands/_eval.c",
                "meld8_env/hands/_score.c",
            ],
            depends=[
                "meld8_env/engine/_engine.h",
                "meld8_env/engine/_splitmix.h",
                "meld8_env/hands/_eval.h",
                "meld8_env/hands/_score.h",
            ],
            extra_compile_args=CFLAGS,
        ),
    ]
)
