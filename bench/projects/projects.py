"""Real C/C++ projects from Debian source packages, each built by its own build system.

A :class:`Project` says how to build one Debian source package the way its authors
do (its own ``configure``, Makefile, CMake or meson files), how to run its own test
suite, how to clean a build for a rebuild, and which linked outputs to measure. It
names no compiler: every build runs with ``CC``, ``CXX``, ``AR``, ``RANLIB`` and ``NM``
set in the environment, and a command of a step may also name them through the
placeholders of :data:`PLACEHOLDERS` (plain Makefiles that hard-code ``CC=gcc`` get
``CC={cc}`` on make's command line). The harness (``bench_projects.py``) fills them
in for each mode: clang at ``-Oz``, GCC at ``-Os``, each with or without LTO, or
``llm-compiler cc``.

The steps:

* ``prepare`` runs once on the pristine unpacked tree, before any copy is made
  (``autoreconf``: generated files that need no compiler, so every mode starts from
  the same ``configure``);
* ``configure`` and ``build`` run in a fresh copy of the prepared tree per mode,
  timed separately; ``{jobs}`` is 1 except in the parallel check;
* ``test`` runs the project's own tests on the build, after it;
* ``clean`` is the project's own clean (``make clean``, ``ninja clean``...), used by
  the rebuild mode before building the same tree again.

Flags: every project keeps its own default flags (autotools ``-g -O2``, the plain
Makefiles' own ``CFLAGS``); CMake gets no build type and meson ``--buildtype=plain``,
as Debian builds them, so no ``-DNDEBUG`` creeps in. The compiler decides the
optimization level: the clang wrappers append ``-Oz`` last (the last ``-O`` wins), the
GCC ones ``-Os``, and
``llm-compiler cc`` ignores the build's ``-O`` levels.

Artifacts are globs relative to the build tree: what the project ships (its shared
libraries, programs and examples). A match counts when it is an ELF executable or
shared object (libtool's wrapper scripts, object files and static archives are
skipped); symbolic links count once, by their target. Test programs are built by the
mode's compiler and run, but not measured: they would count the same code many times
(cJSON's 21 tests each link the Unity framework; expat's and zlib's link a static
copy of the library).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: This folder: the Lua check script and its expected output live here.
BENCH_DIR = Path(__file__).resolve().parent

#: What a step's arguments (and its environment values) may name, filled in per mode:
#: ``{cc}``, ``{cxx}``: the mode's C and C++ compiler wrappers; ``{ar}``, ``{ranlib}``,
#: ``{nm}``: the mode's archiver, index and symbol tools (LLVM's; GCC's ``gcc-ar``,
#: ``gcc-ranlib`` and ``gcc-nm`` in the GCC modes); ``{jobs}``: parallel jobs;
#: ``{tree}``: the build tree (absolute); ``{bench}``: this folder.
PLACEHOLDERS = ("cc", "cxx", "ar", "ranlib", "nm", "jobs", "tree", "bench")


@dataclass(frozen=True)
class Step:
    """One command of a project's build or test.

    Attributes:
        argv: The command, each argument formatted with the placeholders.
        cwd: The folder to run it in, relative to the build tree.
        env: Environment variables added for this command (formatted too).
        stdout_file: For a test: a file in :data:`BENCH_DIR` that the command's standard
            output must equal, byte for byte.
        forbid: For a test that exits 0 whatever it finds: a text whose presence in its
            output fails the step.
    """

    argv: tuple[str, ...]
    cwd: str = "."
    env: tuple[tuple[str, str], ...] = ()
    stdout_file: str | None = None
    forbid: str | None = None


def step(
    *argv: str, cwd: str = ".", stdout_file: str | None = None, forbid: str | None = None, **env: str
) -> Step:
    """Shorthand for :class:`Step`: ``step("make", "-j{jobs}", cwd="src")``."""
    return Step(tuple(argv), cwd=cwd, env=tuple(env.items()), stdout_file=stdout_file, forbid=forbid)


@dataclass(frozen=True)
class Project:
    """A Debian source package and how to build, test, clean and measure it.

    Attributes:
        name: The benchmark's name for it (``--projects``).
        package: The Debian source package (``apt-get source``).
        system: The build system, in words (for the report).
        artifacts: Globs of the linked outputs to measure, relative to the build tree.
        prepare: Run once on the pristine tree (generated files, no compiler).
        configure: Run in each fresh copy, timed as the configure phase.
        build: Run after configure, timed as the build phase.
        test: The project's own tests; each must exit 0 (and match ``stdout_file``).
        clean: The project's own clean, before a rebuild of the same tree.
        notes: What a reader of the results should know (test coverage, choices).
    """

    name: str
    package: str
    system: str
    artifacts: tuple[str, ...]
    build: tuple[Step, ...]
    test: tuple[Step, ...]
    clean: tuple[Step, ...]
    configure: tuple[Step, ...] = ()
    prepare: tuple[Step, ...] = ()
    notes: str = ""


#: make's variables for a plain Makefile that hard-codes its tools.
MAKE_TOOLS = ("CC={cc}", "AR={ar}", "RANLIB={ranlib}")

ZLIB = Project(
    name="zlib",
    package="zlib",
    system="configure + make",
    configure=(step("./configure"),),
    build=(step("make", "-j{jobs}"),),
    test=(step("make", "test"),),
    clean=(step("make", "clean"),),
    artifacts=("libz.so.*.*", "minigzipsh"),
    notes="zlib's own configure (CFLAGS -O3 by default) and Makefile; `make test` runs "
    "example and minigzip, statically and dynamically linked. Measured: the shared "
    "library and the dynamically linked minigzip.",
)

BZIP2 = Project(
    name="bzip2",
    package="bzip2",
    system="Makefile",
    build=(step("make", "-j{jobs}", *MAKE_TOOLS, "libbz2.a", "bzip2", "bzip2recover"),),
    test=(step("make", *MAKE_TOOLS, "test"),),
    clean=(step("make", "clean"),),
    artifacts=("libbz2.so.*.*.*", "bzip2", "bzip2recover"),
    notes="Debian's Makefile (it adds libbz2.so); `make test` compresses and "
    "decompresses three samples and compares them with the references.",
)

CJSON = Project(
    name="cjson",
    package="cjson",
    system="CMake",
    configure=(
        step(
            "cmake",
            "-S",
            ".",
            "-B",
            "build",
            "-DCMAKE_BUILD_TYPE=",
            "-DCMAKE_C_COMPILER={cc}",
            "-DCMAKE_AR={ar}",
            "-DCMAKE_RANLIB={ranlib}",
            "-DENABLE_CJSON_UTILS=ON",
            "-DENABLE_CJSON_TEST=ON",
        ),
    ),
    build=(step("cmake", "--build", "build", "-j", "{jobs}"),),
    test=(step("ctest", "--test-dir", "build", "--output-on-failure"),),
    clean=(step("cmake", "--build", "build", "--target", "clean"),),
    artifacts=("build/libcjson.so.*.*.*", "build/libcjson_utils.so.*.*.*"),
    notes="cJSON and cJSON_Utils (enabled for more code and its tests); ctest runs the "
    "unity tests in tests/ and cJSON_test. The project's flags include -Werror. Measured: "
    "the two shared libraries.",
)

LIBYAML = Project(
    name="libyaml",
    package="libyaml",
    system="autotools",
    prepare=(step("autoreconf", "-fi"),),
    configure=(step("./configure"),),
    # `make check TESTS=` builds the test programs and runs none: they are part of the
    # build (measured, compiled by the mode's compiler) and `make check` only runs them.
    build=(step("make", "-j{jobs}"), step("make", "-j{jobs}", "check", "TESTS=")),
    test=(
        step("make", "check"),
        # Round trips of the bundled examples (parse, emit or dump, parse again, compare):
        # these programs print PASSED or FAILED per file and always exit 0.
        step(
            "sh",
            "-c",
            "tests/run-dumper examples/*.yaml && tests/run-emitter examples/*.yaml",
            forbid="FAILED",
        ),
    ),
    clean=(step("make", "clean"),),
    artifacts=("src/.libs/libyaml-*.so.*.*.*",),
    notes="autoreconf once on the pristine tree; the test programs are built in the build "
    "phase. libyaml's own `make check` runs only test-version and test-reader (its YAML "
    "test suite is fetched from the network, not in the source), so its run-dumper and "
    "run-emitter round-trip the bundled examples/*.yaml too. Measured: the shared library.",
)

EXPAT = Project(
    name="expat",
    package="expat",
    system="autotools (C and C++)",
    prepare=(step("./buildconf.sh", cwd="expat"),),
    configure=(step("./configure", "--without-docbook", cwd="expat"),),
    build=(
        step("make", "-j{jobs}", cwd="expat"),
        step("make", "-j{jobs}", "check", "TESTS=", cwd="expat"),
    ),
    test=(step("make", "check", cwd="expat"),),
    clean=(step("make", "clean", cwd="expat"),),
    artifacts=(
        "expat/lib/.libs/libexpat.so.*.*.*",
        "expat/xmlwf/.libs/xmlwf",
        "expat/examples/.libs/elements",
        "expat/examples/.libs/outline",
    ),
    notes="The upstream tree in expat/ (buildconf.sh once); `make check` runs runtests "
    "(C) and runtestspp, the same tests compiled as C++ (through the C++ compiler). "
    "Measured: libexpat.so, xmlwf and the two examples (the test programs link a static "
    "copy of the library).",
)

SERD = Project(
    name="serd",
    package="serd",
    system="meson + ninja",
    configure=(
        step(
            "meson",
            "setup",
            "build",
            "--buildtype=plain",
            "-Ddocs=disabled",
            "-Dtests=enabled",
            "-Dtools=enabled",
        ),
    ),
    build=(step("ninja", "-C", "build", "-j", "{jobs}"),),
    test=(step("meson", "test", "-C", "build", "--num-processes", "1", "--print-errorlogs"),),
    clean=(step("ninja", "-C", "build", "clean"),),
    artifacts=("build/libserd-*.so.*.*.*", "build/serdi*"),
    notes="meson and ninja from the virtual environment (pip install meson ninja); "
    "`meson test` runs serd's unit tests and the W3C Turtle/NTriples/NQuads/TriG suites "
    "through serdi.",
)

#: lua5.4's Makefile (Debian's patch) builds through a libtool script generated from
#: debian/configure.ac, and every unit twice: as C for liblua5.4 and as C++ for
#: liblua5.4-c++. Debian's own flags (dpkg-buildflags) are replaced by ``-g -O2``.
LUA_MAKE = (
    "LIBTOOL={tree}/debian/libtool/libtool",
    "CC={cc} -std=gnu99",
    "CXX={cxx}",
    "MYCFLAGS=-g -O2",
    "MYCXXFLAGS=-g -O2",
    "MYLDFLAGS=",
    "MYLIBS=",
)

#: debian/rules writes this header (read by Debian's module-path patch) before building.
LUA_MULTIARCH_HEADER = (
    "( echo '#ifndef _LUA_DEB_MULTIARCH_'; echo '#define _LUA_DEB_MULTIARCH_'; "
    'echo "#define DEB_HOST_MULTIARCH \\"$(dpkg-architecture -qDEB_HOST_MULTIARCH)\\""; '
    "echo '#endif' ) > src/lua5.4-deb-multiarch.h"
)

LUA = Project(
    name="lua5.4",
    package="lua5.4",
    system="Makefile + libtool (C and C++)",
    prepare=(
        step("mkdir", "-p", "debian/libtool"),
        step("cp", "debian/configure.ac", "debian/libtool/"),
        step("autoreconf", "-f", "-i", cwd="debian/libtool", LIBTOOLIZE="libtoolize -i"),
        step("sh", "-c", LUA_MULTIARCH_HEADER),
    ),
    configure=(step("./configure", cwd="debian/libtool"),),
    build=(step("make", "-j{jobs}", "linux-readline", *LUA_MAKE),),
    test=(
        step("make", "test", *LUA_MAKE),
        step("./src/lua5.4", "{bench}/lua_check.lua", stdout_file="lua_check.expected"),
    ),
    clean=(step("make", "clean"),),
    artifacts=(
        "src/.libs/liblua5.4.so.*.*.*",
        "src/.libs/liblua5.4-c++.so.*.*.*",
        "src/lua5.4",
        "src/luac5.4",
    ),
    notes="Debian's source has no test suite (Lua's is a separate tarball): `make test` "
    "only runs `lua -v`, so bench/projects/lua_check.lua (strings, tables, coroutines, "
    "closures, metatables, string.format, pcall/error, integer and float math) runs on "
    "the built interpreter and its output must equal lua_check.expected. The interpreter "
    "links the C library statically; liblua5.4-c++.so (the same units as C++) is built "
    "and measured but no test loads it.",
)

#: The benchmark's modes, in the order they run (see bench_projects.py).
MODES = (
    "clang-oz", "clang-oz-lto", "gcc-os", "gcc-os-lto",
    "cc", "cc-warm", "cc-rebuild", "cc-j8", "cc-tuned", "cc-whole-program",
)  # fmt: skip

#: Every project, in the order the benchmark runs them.
PROJECTS: dict[str, Project] = {
    project.name: project for project in (CJSON, ZLIB, BZIP2, LIBYAML, EXPAT, SERD, LUA)
}
