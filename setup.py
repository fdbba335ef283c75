"""Only the C extension lives here; everything else is in pyproject.toml."""

from setuptools import Extension, setup

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
            extra_compile_args=["-O3", "-std=c99", "-Wall", "-Wno-unused-function"],
        )
    ]
)
