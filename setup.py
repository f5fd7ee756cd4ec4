"""zoo: attention-based neural machine translation for Keras 3 and TensorFlow."""

from setuptools import find_packages, setup

setup(
    name="zoo-nmt",
    version="0.1.0",
    description=(
        "A Keras 3 / TensorFlow model zoo for attention-based neural machine "
        "translation: attention layers, encoder-decoder presets, beam search, "
        "TF Serving export."
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["zoo", "zoo.*", "recipes", "recipes.*", "serving", "serving.*"]),
    package_data={"serving": ["*.config", "*.txt"]},
    install_requires=[
        "tensorflow>=2.16",
        "keras>=3.3",
        "numpy>=1.26",
        # TensorFlow's own bounds are >=0.5.1,<1. ml_dtypes 0.7.0 takes 0.55-0.87 s to import on this
        # project's 2-core machine (numpy 2.4; perf: comparisons and numpy's PyUFunc_AddLoop), 0.6.0 and 0.5.4
        # 4 ms: every command pays it in `import tensorflow`. Lift the bound for a release that imports
        # fast (benchmarks/startup.py prints the version it ran with).
        "ml_dtypes>=0.5.1,<0.7",
        "absl-py>=2.0",
        "ml-collections>=0.1.1",
        "sacrebleu>=2.4",
        "tensorboard>=2.16",
        "babel>=2.14",
        "matplotlib>=3.8",
        "starlette>=0.37",
        "uvicorn>=0.29",
        "httpx>=0.27",
        # SentencePiece subwords: trained with `sentencepiece`, run in the graph by TensorFlow
        # Text (whose version must match TensorFlow's; stock TF Serving links its kernels in).
        "sentencepiece>=0.2",
        "tensorflow-text>=2.16",
    ],
    extras_require={
        # TFDS translation datasets by name (zoo.data.tfds_pairs).
        # importlib_resources: tensorflow-datasets imports it to download, without declaring it.
        "tfds": ["tensorflow-datasets>=4.9", "importlib_resources>=5"],
        "test": [
            "pytest>=8.0",
            "pytest-xdist>=3.5",  # the README's test command runs two test processes (-n 2)
            "jax[cpu]>=0.4.30",
            # Tests only: checks serving/warmup.py and models.config against TF Serving's own protos.
            "tensorflow-serving-api>=2.16",
            "tensorflow-datasets>=4.9",  # mock TFDS data in tests/data/test_data_tfds.py
            # Runs the colab/ notebooks headless in tests/colab.
            "nbclient>=0.10",
            "nbformat>=5.10",
            "ipykernel>=6.29",
        ],
    },
    entry_points={
        "console_scripts": [
            "zoo-train=recipes.train:run",
            "zoo-eval=recipes.evaluate:run",
            "zoo-export=recipes.export:run",
            "zoo-translate=recipes.translate:run",
            "zoo-serve=recipes.serve:run",
        ],
    },
)
